import { describe, expect, it } from "vitest";
import {
  classifySearch,
  identityAlternatives,
  identityPath,
  intentPath,
  runOrIdentityPath,
  runPath,
} from "./search.ts";

describe("classifySearch", () => {
  it("treats 32 hex characters as a key or trace id, lower-cased", () => {
    expect(classifySearch("  A6C763D983F2BFEB6708A2A2494A12DE ")).toEqual({
      kind: "hex32",
      value: "a6c763d983f2bfeb6708a2a2494a12de",
    });
  });
  it("treats what a run id could be as a run id or an identity value (an order id), trimmed; blank as nothing", () => {
    expect(classifySearch("run-7")).toEqual({ kind: "runOrIdentity", value: "run-7" });
    expect(classifySearch(" A-1182 ")).toEqual({ kind: "runOrIdentity", value: "A-1182" });
    expect(classifySearch("a6c763d983f2bfeb6708a2a2494a12d")).toEqual({
      kind: "runOrIdentity",
      value: "a6c763d983f2bfeb6708a2a2494a12d",
    });
    expect(classifySearch("   ")).toEqual({ kind: "empty" });
  });
  it("treats what cannot be a run id (spaces, non-ASCII) as an identity value, as typed", () => {
    expect(classifySearch("Café 12")).toEqual({ kind: "identity", value: "Café 12" });
    expect(classifySearch("ann@example.org ")).toEqual({ kind: "runOrIdentity", value: "ann@example.org" });
    expect(classifySearch(`é${"x".repeat(199)}`)).toEqual({ kind: "identity", value: `é${"x".repeat(199)}` });
  });
  it("refuses over 200 characters with a reason", () => {
    for (const bad of ["x".repeat(201), `é${"x".repeat(200)}`]) {
      expect(classifySearch(bad)).toMatchObject({ kind: "invalid", reason: expect.stringMatching(/200 characters/) });
    }
  });
  it("builds paths with the value encoded", () => {
    expect(runPath("run 7/a")).toBe("/runs/run%207%2Fa");
    // Dot segments: a URL would resolve /runs/.. to / (and /runs/. to /runs/): the id goes in the query.
    for (const id of [".", "..", "a/b?c#d", "%2e%2e", "100%"]) {
      const url = new URL(runPath(id), "http://dashboard.invalid/");
      const segment = decodeURIComponent(url.pathname.slice("/runs/".length));
      expect(url.pathname.startsWith("/runs/"), id).toBe(true);
      expect(segment === " " ? url.searchParams.get("id") : segment, id).toBe(id);
    }
    expect(intentPath("ab")).toBe("/intents/ab");
    expect(identityPath("A-1182 & co")).toBe("/identity?value=A-1182+%26+co");
    expect(identityPath("A-1182", "abc")).toBe("/identity?value=A-1182&cursor=abc");
  });
  it("a run-id-shaped value opens the run only when the run exists and no identity holds it", () => {
    expect(runOrIdentityPath("r-1", { run: true, identity: false })).toBe("/runs/r-1");
    expect(runOrIdentityPath("r-1", { run: true, identity: true })).toBe("/identity?value=r-1");
    expect(runOrIdentityPath("r-1", { run: false, identity: false })).toBe("/identity?value=r-1");
    expect(runOrIdentityPath("r-1", { run: false, identity: true })).toBe("/identity?value=r-1");
  });
});

describe("identityAlternatives (issue 22: 'W5199551' missed '#W5199551', a sentence found nothing)", () => {
  it("the value with its leading '#' removed or one added", () => {
    expect(identityAlternatives("W5199551")).toEqual(["#W5199551"]);
    expect(identityAlternatives(" #W5199551 ")).toEqual(["W5199551"]);
  });
  it("a sentence's id-like words (a digit, 3+ characters, trailing punctuation stripped), each with its '#' form", () => {
    expect(identityAlternatives("what happened to order A-1182?")).toEqual(["A-1182", "#A-1182"]);
    expect(identityAlternatives("orders #W5199551, and “B-77”.")).toEqual(["#W5199551", "W5199551", "B-77", "#B-77"]);
    // No digit, or under 3 characters: not an id.
    expect(identityAlternatives("refund for 12 of them")).toEqual([]);
  });
});
