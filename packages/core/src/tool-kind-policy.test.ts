import { describe, expect, it } from "vitest";
import { TOOL_KINDS } from "./statuses.ts";
import { defaultResendWhenAbsent, toolKindPolicy } from "./tool-kind-policy.ts";

describe("toolKindPolicy: one place for what a tool kind means", () => {
  it.each([
    { kind: "read_only", hasEffect: false, remoteDedupesKey: false, remoteIgnoresKey: false },
    { kind: "idempotent_by_key", hasEffect: true, remoteDedupesKey: true, remoteIgnoresKey: false },
    { kind: "unsafe", hasEffect: true, remoteDedupesKey: false, remoteIgnoresKey: true },
  ] as const)("$kind", ({ kind, ...facts }) => {
    expect(toolKindPolicy(kind)).toEqual(facts);
  });

  it("has a policy for every kind, and refuses a value that is none", () => {
    for (const kind of TOOL_KINDS) expect(toolKindPolicy(kind)).toBeDefined();
    expect(() => toolKindPolicy("batch" as never)).toThrow(/unknown tool kind: batch/);
  });

  it.each([
    { kind: "read_only", window: true, expected: false },
    { kind: "idempotent_by_key", window: false, expected: true },
    { kind: "unsafe", window: false, expected: false },
    { kind: "unsafe", window: true, expected: true },
  ] as const)(
    "resendWhenAbsent defaults to $expected for $kind (settle window: $window)",
    ({ kind, window, expected }) => {
      expect(defaultResendWhenAbsent(kind, window)).toBe(expected);
    },
  );
});
