import { describe, expect, it } from "vitest";
import { classifySearch, intentPath, runPath } from "./search.ts";

describe("classifySearch", () => {
  it("treats 32 hex characters as a key or trace id, lower-cased", () => {
    expect(classifySearch("  A6C763D983F2BFEB6708A2A2494A12DE ")).toEqual({
      kind: "hex32",
      value: "a6c763d983f2bfeb6708a2a2494a12de",
    });
  });
  it("treats anything else as a run id, and blank as nothing", () => {
    expect(classifySearch("run-7")).toEqual({ kind: "run", runId: "run-7" });
    expect(classifySearch("a6c763d983f2bfeb6708a2a2494a12d")).toEqual({
      kind: "run",
      runId: "a6c763d983f2bfeb6708a2a2494a12d",
    });
    expect(classifySearch("   ")).toEqual({ kind: "empty" });
  });
  it("refuses what cannot be a run id (spaces, non-ASCII, over 200 characters) with a reason", () => {
    for (const bad of ["hello world", "run-é", "x".repeat(201)]) {
      expect(classifySearch(bad)).toMatchObject({ kind: "invalid", reason: expect.stringMatching(/run ids/) });
    }
  });
  it("builds paths with the id encoded", () => {
    expect(runPath("run 7/a")).toBe("/runs/run%207%2Fa");
    expect(intentPath("ab")).toBe("/intents/ab");
  });
});
