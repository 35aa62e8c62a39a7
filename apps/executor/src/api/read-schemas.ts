/**
 * The API's one schema of an intent record, in the shapes its procedures answer: the summary of the
 * lists (no result), the detail of `intents.get` (`hasResult` and the result), and the whole record
 * of `calls.get`, `queue.resolve` and the audit snapshots (`result: null` when none was recorded).
 * Statuses, resolutions and reason codes are the core's closed unions (`@tristate/core` `statuses.ts`),
 * the compensation the core's schema.
 */
import {
  INTENT_EVENT_TYPES,
  INTENT_STATUSES,
  type IntentRecord,
  REASON_CODES,
  RESOLUTIONS,
  recordedCompensationSchema,
  shownRecord,
} from "@tristate/core";
import { z } from "zod";

/** The error recorded on an intent record (`IntentError` of `@tristate/core`). */
export const intentErrorSchema = z.object({
  code: z.enum(REASON_CODES),
  message: z.string(),
  httpStatus: z.number().optional(),
  /** ms. */
  retryAfterMs: z.number().optional(),
  /** Epoch ms before which nothing is sent again for this record. */
  retryNotBeforeEpochMs: z.number().optional(),
  field: z.string().optional(),
  rule: z.string().optional(),
});

/** An intent record as the read API shows it (times in epoch ms; no result). */
export const intentSummarySchema = z.object({
  /** The tenant the record belongs to. */
  tenant: z.string(),
  /** Idempotency key (32 lower-case hex characters), unique per tenant. */
  key: z.string(),
  runId: z.string(),
  stepId: z.string(),
  tool: z.string(),
  /** The persisted arguments; values of the tool's `secretFields` masked for every role but admin (`secrets.ts`). */
  args: z.json(),
  identity: z.record(z.string(), z.string()),
  status: z.enum(INTENT_STATUSES),
  attempt: z.number().int(),
  /** Epoch ms: until when the call or sweeper that took the record owns it (its lease). */
  leaseUntilEpochMs: z.number(),
  /** Epoch ms: when the sweeper next takes the record once its lease has passed; null: only a person settles it. */
  recheckAtEpochMs: z.number().nullable(),
  /**
   * @deprecated Read `leaseUntilEpochMs` and `recheckAtEpochMs`. Epoch ms: when the record is next due
   * (the later of its lease and its re-check); its lease when only a person settles it (`legacyDeadline`).
   */
  deadlineEpochMs: z.number(),
  error: intentErrorSchema.nullable(),
  /** What an abort runs for the effect, when the tool declares it (`RecordedCompensation` of `@tristate/core`). */
  compensation: recordedCompensationSchema.nullable(),
  resolution: z.enum(RESOLUTIONS).nullable(),
  needsHuman: z.boolean(),
  reconcileSweeps: z.number().int(),
  version: z.number().int(),
  /** Epoch ms. */
  createdAtEpochMs: z.number(),
  /** Epoch ms. */
  updatedAtEpochMs: z.number(),
  /** Epoch ms, or null while not SUCCEEDED / FAILED_NO_EFFECT. */
  finishedAtEpochMs: z.number().nullable(),
  traceId: z.string().nullable(),
  /** The idempotency key sent on the wire for the current attempt; null means `key`. */
  sentKey: z.string().nullable(),
  /** Epoch ms from which a probe's "absent" proves absence (the tool's settle window), or null. */
  settlesAtEpochMs: z.number().nullable(),
});

/** A whole record: the summary plus the result (`hasResult` false: none recorded). */
export const intentDetailRecordSchema = intentSummarySchema.extend({
  hasResult: z.boolean(),
  result: z.json().nullable(),
});

/** A whole record as `calls.get`, `queue.resolve` and the audit return it: `result` null when none was recorded. */
export const intentRecordSchema = intentSummarySchema.extend({
  /** The tool's result, or null (none recorded, or a `null` result). */
  result: z.json().nullable(),
});

/** An intent record as {@link intentRecordSchema} types it. */
export type IntentRecordOut = z.infer<typeof intentRecordSchema>;

/**
 * A record for the API: `result` is `null` when none was recorded (JSON has no `undefined`), and
 * `resolution` as readers see it (`shownRecord`: `needs_human` while an UNKNOWN waits for a person).
 */
export function recordOut(record: IntentRecord): IntentRecordOut {
  return { ...shownRecord(record), result: record.result ?? null, error: record.error ? { ...record.error } : null };
}

/** One timeline event (id: the bigint sequence number as a string; time in epoch ms). */
export const timelineEventSchema = z.object({
  id: z.string(),
  type: z.enum(INTENT_EVENT_TYPES),
  atEpochMs: z.number(),
  data: z.record(z.string(), z.json()),
});
