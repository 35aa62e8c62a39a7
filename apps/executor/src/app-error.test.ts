import { InvalidArgumentsError, OperatorActionError } from "@tristate/core";
import { CursorError, QueryInputError } from "@tristate/db";
import { describe, expect, it } from "vitest";
import { AppError, appErrorOf, isAppError, toTRPCError } from "./app-error.ts";

/** The status, message, field and detail a client sees for `error`, or undefined (a 500). */
function seen(error: unknown) {
  const app = appErrorOf(error);
  if (!app) return undefined;
  const trpc = toTRPCError(app);
  return { code: trpc.code, message: trpc.message, field: app.field, detail: app.detail };
}

describe("appErrorOf: every error's status in one place", () => {
  it("refused operator actions: INVALID_INPUT → 400, NOT_FOUND → 404, the others → 409, with reason and detail", () => {
    expect(seen(new OperatorActionError("INVALID_INPUT", "note: too long", { field: "note" }))).toEqual({
      code: "BAD_REQUEST",
      message: "note: too long",
      field: "note",
      detail: { reason: "INVALID_INPUT" },
    });
    expect(seen(new OperatorActionError("NOT_FOUND", "gone", { field: "key" }))?.code).toBe("NOT_FOUND");
    for (const code of ["NOT_WAITING", "STALE_VERSION", "NOT_ALLOWED", "ACTION_ID_REUSED"] as const) {
      expect(seen(new OperatorActionError(code, "no", { detail: { winner: { by: "x" } } }))).toEqual({
        code: "CONFLICT",
        message: "no",
        field: undefined,
        detail: { reason: code, winner: { by: "x" } },
      });
    }
  });

  it("query input, cursors and arguments → 400 naming the field", () => {
    expect(seen(new QueryInputError("toEpochMs", "must be after fromEpochMs"))).toMatchObject({
      code: "BAD_REQUEST",
      message: "toEpochMs: must be after fromEpochMs",
      field: "toEpochMs",
    });
    expect(seen(new CursorError())).toMatchObject({
      code: "BAD_REQUEST",
      message: "cursor: cursor is not a cursor of this list",
      field: "cursor",
    });
    const args = new InvalidArgumentsError("keyFor", { tool: "t", field: "args.amount", rule: "must be a number" });
    expect(seen(args)).toMatchObject({
      code: "BAD_REQUEST",
      message: "args.amount must be a number",
      field: "args.amount",
    });
  });

  it("an AppError as it is; anything else is unknown (a 500); guards read brands, not classes", () => {
    const app = new AppError("FORBIDDEN", "no");
    expect(appErrorOf(app)).toBe(app);
    expect(appErrorOf(new RangeError("cursor is not a cursor of this list"))).toBeUndefined();
    expect(appErrorOf(new Error("boom"))).toBeUndefined();
    expect(appErrorOf("text")).toBeUndefined();
    const foreign = Object.assign(new Error("no"), { code: "NOT_FOUND", field: "key", detail: undefined });
    Object.defineProperty(foreign, Symbol.for("tristate.error.kind"), { value: "operator_action" });
    expect(seen(foreign)?.code).toBe("NOT_FOUND");
    expect(isAppError(Object.defineProperty(new Error("x"), Symbol.for("tristate.error.kind"), { value: "app" }))).toBe(
      true,
    );
  });
});
