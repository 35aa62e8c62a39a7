import { describe, expect, it } from "vitest";
import { z } from "zod";
import { allowedKeysOf, unknownFieldError, unknownKeysError } from "./unknown-keys.ts";

const filters = z.strictObject({ status: z.string().optional(), tool: z.string().optional() });
const input = z.strictObject({ filters: filters.optional(), limit: z.number().optional() });

const firstIssue = (schema: z.ZodType, value: unknown, error = unknownKeysError) => {
  const parsed = schema.safeParse(value, { error });
  if (parsed.success) throw new Error("expected a refusal");
  const issue = parsed.error.issues[0];
  if (!issue) throw new Error("expected an issue");
  return issue;
};

describe("an unknown key names the keys the object allows", () => {
  it("at the top: the key and every allowed key, in declaration order", () => {
    expect(firstIssue(input, { resolution: "UNKNOWN" })).toMatchObject({
      code: "unrecognized_keys",
      path: [],
      keys: ["resolution"],
      message: 'unknown key "resolution"; allowed keys: filters, limit',
    });
  });

  it("nested: the keys of the object that refused it, at its path", () => {
    expect(firstIssue(input, { filters: { resolution: "x", runId: "r" } })).toMatchObject({
      path: ["filters"],
      message: 'unknown keys "resolution", "runId"; allowed keys: status, tool',
    });
  });

  it("an object that takes no keys says so; a record over an enum lists the enum", () => {
    expect(firstIssue(z.strictObject({}), { a: 1 }).message).toBe('unknown key "a"; allowed keys: none');
    const byColour = z.record(z.enum(["red", "green"]), z.number());
    expect(allowedKeysOf(byColour)).toEqual(["red", "green"]);
    expect(allowedKeysOf(z.string())).toBeNull();
  });

  it("other issues keep zod's text", () => {
    expect(firstIssue(input, { limit: "ten" }).message).toBe("Invalid input: expected number, received string");
  });

  it("a declaration's field error: the allowed fields", () => {
    expect(firstIssue(input, { timeout: 5 }, unknownFieldError).message).toBe(
      "unknown field; allowed fields: filters, limit",
    );
  });
});
