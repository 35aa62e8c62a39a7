import {
  type IntentError,
  type IntentRecord,
  type IntentStatus,
  type JsonValue,
  parseRecordedCompensation,
  type ShownRecord,
  type StoredResolution,
  shownRecord,
} from "@tristate/core";

/**
 * Rewrites a record's arguments before they leave the database layer (masking fields a tool marks
 * secret — issue 5's concern). The default shows them as stored.
 */
export type ArgsRedactor = (record: { tool: string; args: JsonValue }) => JsonValue;

/**
 * An intent record as the read API shows it: the core's {@link IntentRecord} (times in epoch ms)
 * without the result (see {@link IntentDetailRecord}), with `args` after the redactor when one is given,
 * and the words readers see derived by `shownRecord` (`resolution: "needs_human"` while an UNKNOWN
 * waits for a person).
 */
export type IntentSummary = ShownRecord<Omit<IntentRecord, "result">>;

/** A whole record: the summary plus the tool's result. */
export interface IntentDetailRecord extends IntentSummary {
  /** False when no result was recorded (SQL NULL); then `result` is null. */
  hasResult: boolean;
  /** The tool's result; `null` is a real result only when `hasResult`. */
  result: JsonValue | null;
}

/**
 * Which tenants a read covers: `tenant` given → only that tenant's rows; absent → every tenant's
 * (admins only — the API always passes a non-admin caller's own tenant).
 */
export interface TenantScope {
  tenant?: string | undefined;
}

/** A row of `intent_records` as Prisma's typed client returns it. */
export interface PrismaRecordRow {
  tenant: string;
  key: string;
  runId: string;
  stepId: string;
  tool: string;
  args: unknown;
  identity: unknown;
  status: string;
  attempt: number;
  leaseUntil: Date;
  recheckAt: Date | null;
  error: unknown;
  compensation: unknown;
  resolution: string | null;
  needsHuman: boolean;
  reconcileSweeps: number;
  version: number;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
  traceId: string | null;
  sentKey: string | null;
  settlesAt: Date | null;
}

/** Prisma's typed-client select of the columns of {@link IntentSummary} (everything but `result`). */
export const SUMMARY_SELECT = {
  tenant: true,
  key: true,
  runId: true,
  stepId: true,
  tool: true,
  args: true,
  identity: true,
  status: true,
  attempt: true,
  leaseUntil: true,
  recheckAt: true,
  error: true,
  compensation: true,
  resolution: true,
  needsHuman: true,
  reconcileSweeps: true,
  version: true,
  createdAt: true,
  updatedAt: true,
  finishedAt: true,
  traceId: true,
  sentKey: true,
  settlesAt: true,
} as const;

/**
 * The columns of {@link SUMMARY_SELECT} for raw SQL over `intent_records` (or its archive), aliased as
 * the typed client names them, so {@link toIntentSummary} converts the rows.
 */
export const SUMMARY_COLUMNS_SQL = `tenant, key, run_id AS "runId", step_id AS "stepId", tool, args, identity,
  status::text AS status, attempt, lease_until_at AS "leaseUntil", recheck_at AS "recheckAt", error, compensation, resolution::text AS resolution,
  needs_human AS "needsHuman", reconcile_sweeps AS "reconcileSweeps", version, created_at AS "createdAt",
  updated_at AS "updatedAt", finished_at AS "finishedAt", trace_id AS "traceId", sent_key AS "sentKey",
  settles_at AS "settlesAt"`;

/**
 * Converts a typed-client row to an {@link IntentSummary} (Dates → epoch ms), applying `redact` to the args.
 * @throws TypeError naming the key when the stored compensation is malformed.
 */
export function toIntentSummary(row: PrismaRecordRow, redact?: ArgsRedactor): IntentSummary {
  const args = row.args as JsonValue;
  return shownRecord({
    tenant: row.tenant,
    key: row.key,
    runId: row.runId,
    stepId: row.stepId,
    tool: row.tool,
    args: redact ? redact({ tool: row.tool, args }) : args,
    identity: row.identity as Record<string, string>,
    status: row.status as IntentStatus,
    attempt: row.attempt,
    leaseUntilEpochMs: row.leaseUntil.getTime(),
    recheckAtEpochMs: row.recheckAt ? row.recheckAt.getTime() : null,
    error: (row.error ?? null) as IntentError | null,
    compensation: parseRecordedCompensation(row.compensation, row.key),
    resolution: row.resolution as StoredResolution | null,
    needsHuman: row.needsHuman,
    reconcileSweeps: row.reconcileSweeps,
    version: row.version,
    createdAtEpochMs: row.createdAt.getTime(),
    updatedAtEpochMs: row.updatedAt.getTime(),
    finishedAtEpochMs: row.finishedAt ? row.finishedAt.getTime() : null,
    traceId: row.traceId,
    sentKey: row.sentKey,
    settlesAtEpochMs: row.settlesAt ? row.settlesAt.getTime() : null,
  });
}

/** Converts the port's record to an {@link IntentDetailRecord}, applying `redact` to the args. */
export function toIntentDetail(record: IntentRecord, redact?: ArgsRedactor): IntentDetailRecord {
  const { result, ...rest } = record;
  return {
    ...shownRecord(rest),
    args: redact ? redact({ tool: record.tool, args: record.args }) : record.args,
    hasResult: result !== undefined,
    result: result === undefined ? null : result,
  };
}
