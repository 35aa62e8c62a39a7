/**
 * Compensation registered with the intent (the source design's first compensation rule): the
 * reserved step ids of compensating and corrective calls, and the compensation stored on the record
 * — its type and its one zod schema, which the stores parse it with on read and the API's read
 * schemas answer it with (the dashboard gets its type through the router's outputs).
 */
import { z } from "zod";
import { type JsonValue, toJson } from "./json.ts";
import { COMPENSATION_KINDS, type CompensationKind, OUTCOMES, type Outcome } from "./statuses.ts";
import type { AnyTool } from "./tool.ts";

/** Step ids of compensating and corrective calls: `compensate:<original key>`, `correct:<original key>`. */
export const COMPENSATE_STEP_PREFIX = "compensate:";
export const CORRECT_STEP_PREFIX = "correct:";

/** True for records of compensating or corrective calls (they are not themselves compensated). */
export function isCompensationStep(stepId: string): boolean {
  return stepId.startsWith(COMPENSATE_STEP_PREFIX) || stepId.startsWith(CORRECT_STEP_PREFIX);
}

/**
 * The compensation registered on a record before the call: what an abort would run. (A type alias,
 * not an interface, so that it is a {@link JsonValue} too.)
 */
export type RegisteredCompensation = {
  /** The compensating (or corrective) tool's name. */
  tool: string;
  kind: CompensationKind;
  /**
   * Its arguments, built from the call's arguments and result once the effect is confirmed; null
   * before that, or when they could not be built (built again, and reported, when an abort needs them).
   */
  args: JsonValue | null;
};

/** The compensation of a record once an abort (or an operator) ran it: the registered fields and its call's. */
export type RanCompensation = RegisteredCompensation & {
  /**
   * The idempotency key of the compensating call (its own intent record, step `compensate:<key>` or
   * `correct:<key>`); `""` when that call was refused before any record was written (e.g. the
   * compensating tool is not in the catalog: `status` is then FAILED_NO_EFFECT).
   */
  key: string;
  /** That call's outcome when it was noted. */
  status: Outcome;
  /** True unless that call SUCCEEDED (it then waits to be reconciled or decided). */
  needsHuman: boolean;
  /** Epoch ms it was noted. */
  atEpochMs: number;
};

/** The compensation stored on an intent record (`IntentRecord.compensation`, when not null). */
export type RecordedCompensation = RegisteredCompensation | RanCompensation;

const registeredCompensationSchema = z.strictObject({
  tool: z.string().min(1),
  kind: z.enum(COMPENSATION_KINDS),
  args: z.json().nullable(),
});

const ranCompensationSchema = registeredCompensationSchema.extend({
  key: z.string(),
  status: z.enum(OUTCOMES),
  needsHuman: z.boolean(),
  atEpochMs: z.number(),
});

/**
 * The one schema of {@link RecordedCompensation}, as the JSON stored in the `compensation` column and
 * answered by the API: `{ tool, kind, args }`, plus `{ key, status, needsHuman, atEpochMs }` once run.
 * Strict: an unknown field, or a run's field without the others, is refused.
 */
export const recordedCompensationSchema: z.ZodType<RecordedCompensation> = z.union([
  ranCompensationSchema,
  registeredCompensationSchema,
]);

/**
 * A record's stored compensation, parsed (for a store reading its rows or snapshots).
 * @param value - the stored JSON (`null` or `undefined`: none registered).
 * @param key - the record's key, named in the error.
 * @returns the compensation, or null.
 * @throws TypeError naming the key and the faulty fields (not their values, which may be personal
 *   data) when the value is not a {@link RecordedCompensation}: the stored row is damaged, or was
 *   written by something other than the executor; nothing is guessed.
 */
export function parseRecordedCompensation(value: unknown, key: string): RecordedCompensation | null {
  if (value === null || value === undefined) return null;
  // A run's compensation has a key: parsed as one, so that the error names the field at fault.
  const schema = typeof value === "object" && "key" in value ? ranCompensationSchema : registeredCompensationSchema;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const faults = parsed.error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message));
  throw new TypeError(`intent record ${key}: the stored compensation is malformed: ${faults.join("; ")}`);
}

/**
 * The compensation spec registered on the intent record before the call (the source design's
 * first rule): the compensating tool, its arguments once the effect is confirmed (fields from the
 * result are filled in then), and later the compensation's key and outcome.
 */
export function registeredCompensation(tool: AnyTool, args?: unknown, result?: unknown): RegisteredCompensation | null {
  const spec = tool.irreversible ? tool.corrective : tool.compensation;
  if (!spec) return null;
  let filled: JsonValue | null = null;
  if (args !== undefined) {
    try {
      filled = toJson(spec.args(args, result)) ?? null;
    } catch {
      filled = null; // built again (and reported) when an abort needs it
    }
  }
  return { tool: spec.tool, kind: tool.irreversible ? "corrective" : "compensation", args: filled };
}
