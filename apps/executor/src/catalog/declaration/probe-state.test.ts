import { isFoundStateUnknown, isRefusedUnderKey } from "@tristate/core";
import { describe, expect, it } from "vitest";
import { answerFromState } from "./probe-state.ts";

// Issue 21 §5 (rule 5a): what a declarative probe's find says, read with its `state` (HTTP and MCP alike).
const STATE = { field: "status", done: ["succeeded"], failed: ["failed", "canceled"], pending: ["pending"] };
const item = (status: unknown, id = "ch") => ({ id, status });

describe("answerFromState", () => {
  it("done → the done item, before any other (every item of a non-empty array is read)", () => {
    expect(answerFromState(STATE, [item("failed", "a"), item("succeeded", "b")], "key probe")).toEqual(
      item("succeeded", "b"),
    );
  });
  it("pending (and nothing done) → the pending item: delivered and under way", () => {
    expect(answerFromState(STATE, [item("failed", "a"), item("pending", "b")], "key probe")).toEqual(
      item("pending", "b"),
    );
  });
  it("every item failed → refusedUnderKey with the first as evidence", () => {
    const answer = answerFromState(STATE, [item("canceled", "a"), item("failed", "b")], "key probe");
    expect(isRefusedUnderKey(answer)).toBe(true);
    expect(answer).toMatchObject({ evidence: item("canceled", "a") });
    expect((answer as { detail: string }).detail).toMatch(/status = "canceled", a failed state/);
  });
  it("a value in no list (or a missing field) beside failed ones → cannot tell, never the item", () => {
    const answer = answerFromState(STATE, [item("failed", "a"), { id: "b" }], "identity probe");
    expect(isFoundStateUnknown(answer)).toBe(true);
    expect(answer).toMatchObject({
      item: { id: "b" },
      why: "status = null is none of the identity probe's declared states",
    });
  });
  it("no state declared → cannot tell; always_done → the item", () => {
    const unconfigured = answerFromState(undefined, [item("succeeded")], "key probe");
    expect(isFoundStateUnknown(unconfigured)).toBe(true);
    expect((unconfigured as { why: string }).why).toMatch(/declares no state/);
    expect(answerFromState("always_done", [item("whatever")], "key probe")).toEqual(item("whatever"));
  });
});
