import { INTENT_STATUSES, operatorOptions, REASON_CODES, TOOL_KINDS } from "@tristate/core";
import { filterTextSchema } from "@tristate/db";
import { z } from "zod";
import { viewerProcedure } from "../../trpc/init.ts";
import { maskerFor } from "../secrets.ts";
import { readTenant, tenantInput } from "../tenancy.ts";

/** Input of `queue.list` (all optional). */
export const queueListInput = z
  .object({
    /** Tools whose name contains this text (case-insensitive), as on every list. */
    tool: filterTextSchema.optional(),
    /** `nextCursor` of the previous page. */
    cursor: z.string().max(200).optional(),
    limit: z.number().int().min(1).max(500).optional(),
    /** Admin keys: only this tenant's (default: every tenant). Other keys always see their own tenant. */
    tenant: tenantInput,
  })
  .strict()
  .optional();

/** One record waiting for a human. */
export const queueItemSchema = z.object({
  /** The record's tenant. */
  tenant: z.string(),
  key: z.string(),
  tool: z.string(),
  /** The tool's kind, or null when the tool is no longer in the catalog. */
  kind: z.enum(TOOL_KINDS).nullable(),
  runId: z.string(),
  stepId: z.string(),
  /** The effect in words (the tool's `describe`), e.g. "refund of 49.90 EUR on order A-1182". */
  effect: z.string(),
  /** Canonical identity fields (not the full arguments). */
  identity: z.record(z.string(), z.string()),
  status: z.enum(INTENT_STATUSES),
  attempt: z.number().int(),
  /** Pass as `expectedVersion` to `queue.resolve`. */
  version: z.number().int(),
  error: z.object({ code: z.enum(REASON_CODES), message: z.string() }).nullable(),
  /** Epoch ms. */
  createdAtEpochMs: z.number(),
  /** Age of the record, ms. */
  ageMs: z.number(),
  reconcileSweeps: z.number().int(),
  resendAllowed: z.boolean(),
  resendRefusal: z.string().nullable(),
  keyExpired: z.boolean(),
  /** Cautions that go with a resend (unsafe tool, expired key). */
  resendWarnings: z.array(z.string()),
  hasKeyProbe: z.boolean(),
  hasIdentityProbe: z.boolean(),
  traceId: z.string().nullable(),
});

/** Output of `queue.list`. */
export const queueListOutput = z.object({ items: z.array(queueItemSchema), nextCursor: z.string().nullable() });

/**
 * `queue.list` (viewer): records waiting for a human (`needs_human`), oldest first, with what may be
 * done. Secret argument values are masked for every role but admin (in the effect, identity, error).
 */
export const queueListProcedure = viewerProcedure
  .input(queueListInput)
  .output(queueListOutput)
  .query(async ({ ctx, input }) => {
    const { services } = ctx;
    const tenant = readTenant(ctx, input?.tenant);
    const page = await services.tenants.operatorStore(ctx.auth.tenant).listNeedsHuman({
      ...(tenant !== undefined ? { tenant } : {}),
      ...(input?.tool !== undefined ? { tool: input.tool } : {}),
      ...(input?.cursor !== undefined ? { cursor: input.cursor } : {}),
      limit: input?.limit ?? 100,
    });
    // Leases and key retention by the database's clock, which wrote the records (rule 9; issue 21 §6).
    const now = await services.db.clockEpochMs();
    return {
      items: page.records.map((record) => {
        const tool = services.executor.tools.get(record.tool);
        const options = operatorOptions(record, tool, now);
        let effect = record.tool;
        try {
          effect = tool?.describe?.(record.args) || effect;
        } catch {
          // describe is cosmetic
        }
        if (effect === record.tool) {
          const parts = Object.entries(record.identity).map(([k, v]) => `${k}=${v}`);
          if (parts.length) effect = `${record.tool} (${parts.join(", ")})`;
        }
        const item = {
          tenant: record.tenant,
          key: record.key,
          tool: record.tool,
          kind: tool?.kind ?? null,
          runId: record.runId,
          stepId: record.stepId,
          effect,
          identity: record.identity,
          status: record.status,
          attempt: record.attempt,
          version: record.version,
          error: record.error ? { code: record.error.code, message: record.error.message } : null,
          createdAtEpochMs: record.createdAtEpochMs,
          ageMs: Math.max(0, now - record.createdAtEpochMs),
          reconcileSweeps: record.reconcileSweeps,
          resendAllowed: options.resendAllowed,
          resendRefusal: options.resendRefusal,
          keyExpired: options.keyExpired,
          resendWarnings: options.resendWarnings,
          hasKeyProbe: Boolean(tool?.probe),
          hasIdentityProbe: Boolean(tool?.probeByIdentity),
          traceId: record.traceId,
        };
        const masker = maskerFor(ctx, record.tool, record.args);
        return masker.active ? { ...masker.value(item), identity: masker.identity(item.identity) } : item;
      }),
      nextCursor: page.nextCursor,
    };
  });
