import { describe, expect, it } from "vitest";
import { parseTenantParam, withTenant } from "./tenant-filter";

describe("parseTenantParam", () => {
  it("accepts tenant names and nothing else", () => {
    expect(parseTenantParam("acme")).toBe("acme");
    expect(parseTenantParam("t-2_b")).toBe("t-2_b");
    for (const bad of [null, undefined, "", "Acme", "-x", "a b", "x".repeat(64), "../x"]) {
      expect(parseTenantParam(bad), String(bad)).toBeUndefined();
    }
  });
});

describe("withTenant", () => {
  it("sets, replaces and removes the filter, keeping other parameters and the hash", () => {
    expect(withTenant("/queue", "acme")).toBe("/queue?tenant=acme");
    expect(withTenant("/intents?tool=a&tenant=old#x", "acme")).toBe("/intents?tool=a&tenant=acme#x");
    expect(withTenant("/intents?tool=a&tenant=old", undefined)).toBe("/intents?tool=a");
    expect(withTenant("/runs/r%2F1", "b")).toBe("/runs/r%2F1?tenant=b");
  });
  it("leaves links off the dashboard alone", () => {
    expect(withTenant("https://jaeger.example/t", "acme")).toBe("https://jaeger.example/t");
    expect(withTenant("//evil.example/x", "acme")).toBe("//evil.example/x");
  });
});
