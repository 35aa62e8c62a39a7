import { describe, expect, it } from "vitest";
import {
  channelTarget,
  channelTargetParts,
  deliveryStatusLook,
  failedDeliveriesSummary,
  formFieldOf,
  parseRecipients,
} from "./notifications";

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

describe("channelTargetParts", () => {
  it("keeps each host or address whole, one part each (the table wraps between parts only)", () => {
    expect(channelTargetParts({ url: "http://127.0.0.1:4713/hook", to: null })).toEqual(["127.0.0.1:4713"]);
    expect(channelTargetParts({ url: null, to: ["ops@example.com", "oncall@example.com"] })).toEqual([
      "ops@example.com",
      "oncall@example.com",
    ]);
    expect(channelTargetParts({ url: null, to: [] })).toEqual(["–"]);
  });
});

describe("failedDeliveriesSummary", () => {
  const failed = (lastError: string | null) => ({ status: "failed" as const, lastError });
  it("is null when no delivery failed", () => {
    expect(failedDeliveriesSummary([{ status: "delivered", lastError: null }])).toBeNull();
    expect(failedDeliveriesSummary([])).toBeNull();
  });
  it("says why from the deliveries' own last errors, never assuming the receiver was at fault", () => {
    const text = failedDeliveriesSummary([
      failed("the channel was deleted before delivery"),
      failed("the channel was deleted before delivery"),
      { status: "pending", lastError: "HTTP 503" },
    ]);
    expect(text).toBe(
      "2 failed deliveries on this page (marked ✕): gave up, no more attempts. " +
        "Last error: “the channel was deleted before delivery” (2).",
    );
    expect(text).not.toMatch(/receiver|acknowledg|503/);
  });
  it("quotes the three commonest errors, counts the rest, and names a failure with no error", () => {
    const text = failedDeliveriesSummary([
      failed("HTTP 500"),
      failed("HTTP 500"),
      failed("connect ECONNREFUSED 127.0.0.1:4713"),
      failed(null),
      failed("HTTP 404"),
      failed("timed out after 10000 ms"),
    ]);
    expect(text).toBe(
      "6 failed deliveries on this page (marked ✕): gave up, no more attempts. Last errors: “HTTP 500” (2); " +
        "“connect ECONNREFUSED 127.0.0.1:4713” (1); “HTTP 404” (1); 2 other errors, each in its row.",
    );
    expect(failedDeliveriesSummary([failed(null)])).toContain("“no error recorded” (1)");
  });
});
