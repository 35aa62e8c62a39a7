import { z } from "zod";

/** The brand every Tristate error carries (the symbol `@tristate/core`'s guards read), so guards survive two copies. */
const ERROR_BRAND = Symbol.for("tristate.error.kind");

function brand(error: Error, kind: "query_input" | "cursor"): void {
  Object.defineProperty(error, ERROR_BRAND, { value: kind, enumerable: false });
}

function kindOf(value: unknown): unknown {
  return typeof value === "object" && value !== null ? (value as { [ERROR_BRAND]?: unknown })[ERROR_BRAND] : undefined;
}

/**
 * Invalid input to a dashboard query (a field out of range, a malformed cursor). `field` names the
 * input field at fault, e.g. `toEpochMs` or `filters.status`, so a service can answer 400 naming it.
 * The message is `<field>: <rule>`.
 */
export class QueryInputError extends Error {
  override readonly name = "QueryInputError";
  /** The input field at fault (dotted path). */
  readonly field: string;
  /** The rule the field broke, e.g. `must be after fromEpochMs`. */
  readonly rule: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.field = field;
    this.rule = message;
    brand(this, "query_input");
  }
}

/**
 * A `cursor` that an operator list (the human queue, the audit log) did not return. A RangeError
 * whose message is the rule (`cursor is not a cursor of this list`); `field` is always `cursor`.
 */
export class CursorError extends RangeError {
  override readonly name = "CursorError";
  /** The input field at fault. */
  readonly field = "cursor" as const;
  /** The rule the cursor broke (also the message). */
  readonly rule: string;
  constructor(rule = "cursor is not a cursor of this list") {
    super(rule);
    this.rule = rule;
    brand(this, "cursor");
  }
}

/** True when `e` is a {@link QueryInputError} (from any copy of this package). */
export const isQueryInputError = (e: unknown): e is QueryInputError => kindOf(e) === "query_input";
/** True when `e` is a {@link CursorError} (from any copy of this package). */
export const isCursorError = (e: unknown): e is CursorError => kindOf(e) === "cursor";

/** An epoch-ms instant: an integer from 1970 up to year 275760 (the limit of a JS Date). */
export const epochMsSchema = z
  .number()
  .int("must be an integer (epoch milliseconds)")
  .min(0, "must be at least 0 (epoch milliseconds)")
  .max(8.64e15, "must be at most 8640000000000000 (epoch milliseconds: the latest time a date can hold)");

/** A text filter of the dashboard's lists (a tool's name part, a run or step id, an operator): 1–200 characters. */
export const filterTextSchema = z.string().min(1, "must not be empty").max(200, "must be at most 200 characters");

/**
 * Parses `input` with `schema`.
 * @throws QueryInputError naming the first invalid field.
 */
export function parseQueryInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.length ? issue.path.join(".") : "input";
  throw new QueryInputError(field, issue?.message ?? "invalid");
}

/** A window `[fromEpochMs, toEpochMs)` as given (either end may be left to its default). */
export interface WindowInput {
  fromEpochMs?: number | undefined;
  toEpochMs?: number | undefined;
}

/**
 * Fills in and checks a list's window, blaming the field the caller actually gave: `toEpochMs`
 * defaults to `nowEpochMs`, `fromEpochMs` to `defaultMs` before the end (never before 1970).
 * @param rules.defaultMs - length of the window when `fromEpochMs` is not given, ms.
 * @param rules.maxMs - widest window allowed, ms; omit for no limit.
 * @returns the window read, epoch ms.
 * @throws QueryInputError naming `fromEpochMs` when only it was given (it is after now, or too far
 *   before now) and `toEpochMs` otherwise (not after `fromEpochMs`, or too far after it).
 */
export function resolveWindow(
  input: WindowInput,
  nowEpochMs: number,
  rules: { defaultMs: number; maxMs?: number },
): { fromEpochMs: number; toEpochMs: number } {
  const to = input.toEpochMs ?? nowEpochMs;
  const from = input.fromEpochMs ?? Math.max(0, to - rules.defaultMs);
  checkWindow({ fromEpochMs: from, toEpochMs: to }, input.toEpochMs === undefined ? "fromEpochMs" : "toEpochMs", rules);
  return { fromEpochMs: from, toEpochMs: to };
}

/**
 * Checks a window whose ends are both known: `fromEpochMs` before `toEpochMs`, at most `maxMs` apart.
 * @param blame - the field to name: the one the caller gave (`toEpochMs` when both were given).
 * @param rules.path - prefix of the field's path, e.g. `filters.`.
 * @throws QueryInputError naming `blame` and the rule broken.
 */
export function checkWindow(
  window: { fromEpochMs: number; toEpochMs: number },
  blame: "fromEpochMs" | "toEpochMs",
  rules: { maxMs?: number; path?: string } = {},
): void {
  const fail = (field: string, message: string) => new QueryInputError(`${rules.path ?? ""}${field}`, message);
  const days = rules.maxMs !== undefined ? `${Math.round(rules.maxMs / 86_400_000)} days` : "";
  if (blame === "fromEpochMs") {
    if (window.fromEpochMs >= window.toEpochMs) throw fail("fromEpochMs", "must be before toEpochMs (default: now)");
    if (rules.maxMs !== undefined && window.toEpochMs - window.fromEpochMs > rules.maxMs)
      throw fail(
        "fromEpochMs",
        `must be at most ${days} before toEpochMs (default: now); give toEpochMs too to read an older window`,
      );
    return;
  }
  if (window.fromEpochMs >= window.toEpochMs) throw fail("toEpochMs", "must be after fromEpochMs");
  if (rules.maxMs !== undefined && window.toEpochMs - window.fromEpochMs > rules.maxMs)
    throw fail("toEpochMs", `must be at most ${days} after fromEpochMs (the widest window)`);
}
