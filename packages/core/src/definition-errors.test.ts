import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CanonicalisationError, canon, isCanonicalisationError } from "./canon.ts";
import {
  InvalidArgumentsError,
  isInvalidArgumentsError,
  isToolDefinitionError,
  ToolDefinitionError,
} from "./definition-errors.ts";
import { createExecutor } from "./executor.ts";
import { MemoryIntentStore } from "./memory-intent-store.ts";
import { isOperatorActionError, OperatorActionError } from "./operator/errors.ts";
import { defineTool } from "./tool.ts";

/** What `fn` threw. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

/** An error as another copy of the package would make it: another class, the same brand. */
function foreign(kind: string, fields: Record<string, unknown>): Error {
  const error = Object.assign(new TypeError("from another copy"), fields);
  Object.defineProperty(error, Symbol.for("tristate.error.kind"), { value: kind, enumerable: false });
  return error;
}

describe("definition errors: structured where thrown", () => {
  it("defineTool throws a ToolDefinitionError carrying tool, field and rule; the message is unchanged", () => {
    const error = thrown(() =>
      defineTool({
        name: "refund",
        kind: "unsafe",
        timeoutMs: -1,
        identity: { id: canon.exact },
        invoke: async () => 1,
      }),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(error).toBeInstanceOf(ToolDefinitionError);
    expect(isToolDefinitionError(error)).toBe(true);
    expect(error).toMatchObject({
      tool: "refund",
      field: "timeoutMs",
      rule: "must be a positive number of milliseconds",
      message: 'defineTool("refund"): timeoutMs must be a positive number of milliseconds',
    });
    // A field or a rule with spaces stays whole (the message could not be split back).
    const spaced = thrown(() =>
      defineTool({ name: "t", kind: "unsafe", timeoutMs: 1, identity: { "a b": 1 as never }, invoke: async () => 1 }),
    );
    expect(spaced).toMatchObject({ field: "identity.a b", rule: "must be a canonicaliser function (see canon)" });
  });

  it("keyFor throws an InvalidArgumentsError naming args.<field> (schema, identity) or tool", () => {
    const tool = defineTool({
      name: "refund",
      kind: "idempotent_by_key",
      timeoutMs: 1_000,
      args: z.object({ order_id: z.string(), amount: z.union([z.string(), z.number()]) }),
      identity: { order_id: canon.upper, amount: canon.decimal(2) },
      invoke: async () => 1,
    });
    const ex = createExecutor({ store: new MemoryIntentStore(), tools: [tool] });
    const base = { runId: "r", stepId: "s", tool: "refund" };
    const schema = thrown(() => ex.keyFor({ ...base, args: { order_id: 5, amount: 1 } }));
    expect(isInvalidArgumentsError(schema)).toBe(true);
    expect(schema).toBeInstanceOf(TypeError);
    expect(schema).toMatchObject({ tool: "refund", field: "args.order_id" });
    expect((schema as Error).message).toBe(`keyFor: args.order_id ${(schema as InvalidArgumentsError).rule}`);
    const identity = thrown(() => ex.keyFor({ ...base, args: { order_id: "A", amount: "x" } }));
    expect(identity).toMatchObject({ field: "args.amount", message: expect.stringMatching(/^keyFor: args\.amount /) });
    expect(thrown(() => ex.keyFor({ ...base, tool: "nope", args: {} }))).toMatchObject({
      field: "tool",
      message: 'keyFor: tool "nope" is not in the catalog',
    });
  });

  it("the guards read the brand: they know errors of another copy, and nothing else", () => {
    expect(isToolDefinitionError(foreign("tool_definition", { tool: "t", field: "f", rule: "r" }))).toBe(true);
    expect(isInvalidArgumentsError(foreign("invalid_arguments", {}))).toBe(true);
    expect(isCanonicalisationError(foreign("canonicalisation", {}))).toBe(true);
    expect(isOperatorActionError(foreign("operator_action", {}))).toBe(true);
    expect(isCanonicalisationError(new CanonicalisationError("f", "r"))).toBe(true);
    expect(isOperatorActionError(new OperatorActionError("NOT_FOUND", "gone"))).toBe(true);
    expect(isToolDefinitionError(new TypeError('defineTool("t"): name must match'))).toBe(false);
    expect(isInvalidArgumentsError(new InvalidArgumentsError("x", { tool: "t", field: "f", rule: "r" }))).toBe(true);
    expect(isToolDefinitionError(null)).toBe(false);
    // The brand is not enumerable: it stays out of JSON and of logged fields.
    const error = new ToolDefinitionError({ tool: "t", field: "f", rule: "r" });
    expect(Object.getOwnPropertySymbols(error)).toHaveLength(1);
    expect(Object.keys(error).filter((k) => k !== "name")).toEqual(["tool", "field", "rule"]);
    expect(JSON.stringify(new OperatorActionError("NOT_FOUND", "gone"))).not.toContain("operator_action");
  });
});
