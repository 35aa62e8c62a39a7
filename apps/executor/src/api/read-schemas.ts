import { INTENT_EVENT_TYPES, INTENT_STATUSES, RESOLUTIONS } from "@tristate/core";
import { QueryInputError } from "@tristate/db";
import { z } from "zod";
import { AppError } from "../app-error.ts";

/** The error recorded on an intent record. */
export const intentErrorSchema = z.object({
  code: z.string(),
  message: z.string(),
  httpStatus: z.number().optional(),
  retryAfterMs: z.number().optional(),
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
  /** Epoch ms. */
  deadlineEpochMs: z.number(),
  error: intentErrorSchema.nullable(),
  compensation: z.json().nullable(),
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
});

/** A whole record: the summary plus the result (`hasResult` false: none recorded). */
export const intentDetailRecordSchema = intentSummarySchema.extend({
  hasResult: z.boolean(),
  result: z.json().nullable(),
});

/** One timeline event (id: the bigint sequence number as a string; time in epoch ms). */
export const timelineEventSchema = z.object({
  id: z.string(),
  type: z.enum(INTENT_EVENT_TYPES),
  atEpochMs: z.number(),
  data: z.record(z.string(), z.json()),
});

/**
 * Runs a read query, turning its input errors into BAD_INPUT naming the field.
 * @throws AppError BAD_INPUT for a QueryInputError; anything else unchanged.
 */
export async function runReadQuery<T>(query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (error) {
    if (error instanceof QueryInputError) throw new AppError("BAD_INPUT", error.message, { field: error.field });
    throw error;
  }
}
