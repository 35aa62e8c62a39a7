/**
 * A channel's URL rules (issue 23 §3 attack review): absolute http(s) only, no credentials, at most
 * 2000 characters; an internationalised host is taken (as its punycode form is what is dialled).
 */
import { describe, expect, it } from "vitest";
import { checkCreateChannel } from "./channel-input.ts";

const webhook = (url: string) => checkCreateChannel({ kind: "webhook", name: "w", url });

describe("channel url", () => {
  it("refuses other schemes, relative URLs and credentials, naming the field", () => {
    for (const url of [
      "ftp://example.com/x",
      "file:///etc/passwd",
      "javascript:alert(1)",
      "data:text/plain,hi",
      "//example.com/x",
      "/hook",
      "http://",
    ]) {
      expect(() => webhook(url), url).toThrow(/^url: must be an absolute http\(s\) URL/);
    }
    expect(() => webhook("https://user:pass@example.com/hook")).toThrow(/^url: must not carry credentials/);
    expect(() => webhook("https://token@example.com/hook")).toThrow(/^url: must not carry credentials/);
    expect(() => checkCreateChannel({ kind: "slack", name: "s", url: "https://u:p@hooks.slack.com/x" })).toThrow(
      /^url: must not carry credentials/,
    );
  });

  it("refuses more than 2000 characters; takes a unicode host and path", () => {
    expect(() => webhook(`https://example.com/${"a".repeat(2000)}`)).toThrow(/^url: must be at most 2000 characters/);
    expect(webhook("https://bücher.example/höök?q=ü").url).toBe("https://bücher.example/höök?q=ü");
    expect(webhook("http://127.0.0.1:8080/hook").url).toBe("http://127.0.0.1:8080/hook");
  });
});
