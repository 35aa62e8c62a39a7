import {
  AUDIT_ACTIONS,
  type AuditListEntry,
  epochMsSchema,
  filterTextSchema,
  RUN_ABORT_ACTION,
  type RunAbortAuditEntry,
} from "@tristate/db";
import { z } from "zod";
import { viewerProcedure } from "../../trpc/init.ts";
import { operatorActionSchema } from "../operator-support.ts";
import { intentRecordSchema, recordOut } from "../read-schemas.ts";
import { maskerFor, maskRecord } from "../secrets.ts";
import { readTenant, tenantInput } from "../tenancy.ts";

/** Input of `audit.list` (all optional). */
export const auditListInput = z
  .object({
    /** The acting key's name or id. */
    operator: filterTextSchema.optional(),
    /** An operator action on a record, or `abort_run` (an operator's run abort). */
    action: z.enum(AUDIT_ACTIONS as [string, ...string[]]).optional(),
    /** Tools whose name contains this text (case-insensitive), as on every list. */
    tool: filterTextSchema.optional(),
    /** Entries at or after, epoch ms. */
    fromEpochMs: epochMsSchema.optional(),
    /** Entries before, epoch ms. */
    toEpochMs: epochMsSchema.optional(),
    /** `nextCursor` of the previous page. */
    cursor: z.string().max(40).optional(),
    limit: z.number().int().min(1).max(200).optional(),
    /** Admin keys: only this tenant's (default: every tenant). Other keys always see their own tenant. */
    tenant: tenantInput,
  })
  .strict()
  .refine((v) => v.fromEpochMs === undefined || v.toEpochMs === undefined || v.fromEpochMs < v.toEpochMs, {
    message: "must be after fromEpochMs",
    path: ["toEpochMs"],
  })
  .optional();

/** What every audit entry carries: who acted, when, in which tenant, under which action id. */
const auditBaseSchema = z.object({
  id: z.number().int(),
  /** The tenant acted in. */
  tenant: z.string(),
  operatorActionId: z.string(),
  actorKeyId: z.string(),
  actorName: z.string(),
  /** Epoch ms. */
  atEpochMs: z.number(),
  note: z.string(),
  key: z.string(),
  tool: z.string(),
});

/** One audit entry of an operator action on a record. */
export const auditEntrySchema = auditBaseSchema.extend({
  action: operatorActionSchema,
  before: intentRecordSchema,
  after: intentRecordSchema,
});

/**
 * One audit entry of an operator's run abort (`runs.operatorAbort`): `key` is `run:` and the run id,
 * `tool` "", the report's summary and steps as the abort left them (secret values masked when stored).
 */
export const runAbortAuditEntrySchema = auditBaseSchema.extend({
  action: z.literal(RUN_ABORT_ACTION),
  runId: z.string(),
  report: z.object({
    summary: z.string(),
    complete: z.boolean(),
    needsHuman: z.number().int(),
    steps: z.array(
      z.object({ stepId: z.string(), tool: z.string(), key: z.string(), status: z.string(), outcome: z.string() }),
    ),
  }),
});

/** Output of `audit.list`: entries of both kinds (tell them apart by `action`). */
export const auditListOutput = z.object({
  entries: z.array(z.union([auditEntrySchema, runAbortAuditEntrySchema])),
  nextCursor: z.string().nullable(),
});

function isRunAbort(entry: AuditListEntry): entry is RunAbortAuditEntry {
  return entry.action === RUN_ABORT_ACTION;
}

/**
 * `audit.list` (viewer): operator actions on records and operators' run aborts, newest first,
 * filtered (`action: "abort_run"` for the aborts); cursor pagination. Secret argument values are
 * masked in the before/after snapshots and the note for every role but admin (a run abort's note and
 * report are stored masked).
 * @throws AppError BAD_INPUT (field `cursor`) for a cursor this list did not return.
 */
export const auditListProcedure = viewerProcedure
  .input(auditListInput)
  .output(auditListOutput)
  .query(async ({ ctx, input }) => {
    const tenant = readTenant(ctx, input?.tenant);
    const page = await ctx.services.tenants.operatorStore(ctx.auth.tenant).listAudit({
      ...(tenant !== undefined ? { tenant } : {}),
      ...(input?.operator !== undefined ? { operator: input.operator } : {}),
      ...(input?.action !== undefined ? { action: input.action as (typeof AUDIT_ACTIONS)[number] } : {}),
      ...(input?.tool !== undefined ? { tool: input.tool } : {}),
      ...(input?.fromEpochMs !== undefined ? { fromEpochMs: input.fromEpochMs } : {}),
      ...(input?.toEpochMs !== undefined ? { toEpochMs: input.toEpochMs } : {}),
      ...(input?.cursor !== undefined ? { cursor: input.cursor } : {}),
      limit: input?.limit ?? 50,
    });
    return {
      entries: page.entries.map((e) => {
        if (isRunAbort(e)) return e;
        const masker = maskerFor(ctx, e.tool, e.before.args, e.after.args);
        return {
          ...e,
          note: masker.text(e.note),
          before: maskRecord(masker, recordOut(e.before)),
          after: maskRecord(masker, recordOut(e.after)),
        };
      }),
      nextCursor: page.nextCursor,
    };
  });
