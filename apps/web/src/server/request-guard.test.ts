import { describe, expect, it } from "vitest";
import { fromOwnPages, safeNext } from "./request-guard";

describe("safeNext", () => {
  it("keeps paths of this dashboard", () => {
    for (const next of ["/overview", "/queue?tool=a", "/intents/abc#x", "/runs/r%2F1", "/a/../audit"]) {
      expect(safeNext(next)).toBe(next === "/a/../audit" ? "/audit" : next);
    }
  });
  it("refuses anything a browser could read as another site", () => {
    for (const next of [
      "/\\evil.example/x",
      "/\t/evil.example/x",
      "/\n/evil.example",
      "//evil.example/x",
      "/.//evil.example/x",
      "/a/..//evil.example",
      "/%2e%2e//evil.example",
      "https://evil.example/",
      "evil.example",
      "javascript:alert(1)",
      " /overview",
      "",
      undefined,
      ["//evil.example"],
    ]) {
      expect(safeNext(next), JSON.stringify(next)).toBe("/overview");
    }
  });
});

describe("fromOwnPages", () => {
  const req = (headers: Record<string, string>) =>
    new Request("http://localhost:3000/api/session", {
      method: "POST",
      headers: { host: "dash.example:3000", ...headers },
    });
  it("accepts the dashboard's own pages and non-browser clients", () => {
    expect(fromOwnPages(req({ origin: "http://dash.example:3000", "sec-fetch-site": "same-origin" }))).toBe(true);
    expect(fromOwnPages(req({}))).toBe(true);
    // A same-origin form post under a strict referrer policy may carry `Origin: null`.
    expect(fromOwnPages(req({ origin: "null", "sec-fetch-site": "same-origin" }))).toBe(true);
    expect(fromOwnPages(req({ origin: "http://dash.example:3000" }))).toBe(true);
  });
  it("refuses another site or origin, and the opaque null origin", () => {
    expect(fromOwnPages(req({ origin: "http://evil.example" }))).toBe(false);
    expect(fromOwnPages(req({ origin: "http://dash.example:3001" }))).toBe(false);
    expect(fromOwnPages(req({ origin: "null" }))).toBe(false);
    expect(fromOwnPages(req({ "sec-fetch-site": "cross-site" }))).toBe(false);
    expect(fromOwnPages(req({ "sec-fetch-site": "same-site", origin: "http://dash.example:3000" }))).toBe(false);
  });
});
