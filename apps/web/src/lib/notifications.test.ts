import { describe, expect, it } from "vitest";
import { channelTarget, deliveryStatusLook, formFieldOf, parseRecipients } from "./notifications";

describe("channelTarget", () => {
  it("shows only a URL's host (a Slack URL's path is its secret)", () => {
    expect(channelTarget({ url: "https://hooks.slack.com/services/T0/B0/XyZsecret", to: null })).toBe(
      "hooks.slack.com",
    );
    expect(channelTarget({ url: "http://127.0.0.1:4567/hook?x=1", to: null })).toBe("127.0.0.1:4567");
  });
  it("lists an e-mail channel's recipients", () => {
    expect(channelTarget({ url: null, to: ["a@example.com", "b@example.com"] })).toBe("a@example.com, b@example.com");
  });
  it("never throws on a URL it cannot parse", () => {
    expect(channelTarget({ url: "not a url", to: null })).toBe("not a url");
  });
});

describe("parseRecipients", () => {
  it("splits on commas, semicolons, spaces and new lines, dropping empty parts", () => {
    expect(parseRecipients(" a@x.test, b@x.test;c@x.test\n\nd@x.test ,")).toEqual([
      "a@x.test",
      "b@x.test",
      "c@x.test",
      "d@x.test",
    ]);
    expect(parseRecipients("   ")).toEqual([]);
  });
});

describe("deliveryStatusLook", () => {
  it("gives each status its tone: delivered ok, a retry warn, a first try muted, failed bad", () => {
    expect(deliveryStatusLook({ status: "delivered", attempts: 1 }).tone).toBe("ok");
    expect(deliveryStatusLook({ status: "pending", attempts: 0 }).tone).toBe("muted");
    expect(deliveryStatusLook({ status: "pending", attempts: 2 }).tone).toBe("warn");
    expect(deliveryStatusLook({ status: "failed", attempts: 8 }).tone).toBe("bad");
  });
});

describe("formFieldOf", () => {
  it("names the form field of an API refusal by data.field's first segment", () => {
    expect(formFieldOf({ data: { field: "url" } })).toBe("url");
    expect(formFieldOf({ data: { field: "to.1" } })).toBe("to");
    expect(formFieldOf({ data: { field: "events.0" } })).toBe("events");
  });
  it("is null for a field that is not in the form, or none", () => {
    expect(formFieldOf({ data: { field: "tenant" } })).toBeNull();
    expect(formFieldOf({ data: {} })).toBeNull();
    expect(formFieldOf(new Error("boom"))).toBeNull();
    expect(formFieldOf(null)).toBeNull();
  });
});
