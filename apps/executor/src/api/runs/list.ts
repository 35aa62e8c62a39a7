import { listRunsInput, RUN_STATUSES } from "@tristate/db";
import { z } from "zod";
import { viewerProcedure } from "../../trpc/init.ts";
import { readTenant, tenantInput } from "../tenancy.ts";

/**
 * Input of `runs.list` (all optional): the window (runs that started in `[fromEpochMs, toEpochMs)`,
 * epoch ms; default the 24 h before now; at most 31 days), `status`, `tool` (a case-insensitive
 * substring of a tool name), the previous page's
 * `cursor`, a page size (`limit` 1–200, default 50), and (admins) a `tenant` filter.
 */
export const listRunsProcedureInput = listRunsInput
  .extend({
    /** Admin keys: only this tenant's runs (default: every tenant). Other keys always see their own tenant. */
    tenant: tenantInput,
  })
  .strict();

/** One run (times epoch ms, durations ms; see `RunStatus` in @tristate/db for the statuses). */
export const runSummarySchema = z.object({
  runId: z.string(),
  tenant: z.string(),
  status: z.enum(RUN_STATUSES),
  startedAtEpochMs: z.number(),
  lastActivityEpochMs: z.number(),
  durationMs: z.number(),
  tools: z.array(z.string()),
  steps: z.number().int(),
  /** Records UNKNOWN now (unresolved). */
  unresolvedUnknownCount: z.number().int(),
  /** Records that are or ever were UNKNOWN (resolved ones included). */
  unknownCount: z.number().int(),
  needsHumanCount: z.number().int(),
  /** When the run was aborted (epoch ms), or null; set whatever the status (an aborted run with a step in flight is `open`). */
  abortedAtEpochMs: z.number().nullable(),
});

/** Output of `runs.list`: newest start first; `nextCursor` null on the last page; the window read. */
export const listRunsOutput = z.object({
  items: z.array(runSummarySchema),
  nextCursor: z.string().nullable(),
  fromEpochMs: z.number(),
  toEpochMs: z.number(),
});

/**
 * `runs.list({ fromEpochMs?, toEpochMs?, status?, tool?, cursor?, limit?, tenant? })` (viewer,
 * operator, admin) → a page of agent runs with their status (open / completed / aborted /
 * needs_attention: derived as `RunStatus` documents), start, last activity, duration, tools, steps,
 * unresolved and ever-UNKNOWN counts, human-queue count; runs with only a declared plan included. Keyset pagination on (start, tenant, run id): no duplicates or gaps
 * across pages while calls are made. No argument data, so nothing to mask.
 * @throws AppError BAD_INPUT naming the field (for an empty, reversed or too wide window:
 *   `fromEpochMs` when only it was given, else `toEpochMs`; `cursor` for a forged cursor); FORBIDDEN (field `tenant`) when a non-admin names another tenant.
 */
export const runsListProcedure = viewerProcedure
  .input(listRunsProcedureInput.optional())
  .output(listRunsOutput)
  .query(async ({ ctx, input }) => {
    const { tenant: requested, ...query } = input ?? {};
    const tenant = readTenant(ctx, requested);
    return ctx.services.db.reads(tenant).listRuns(query, { nowEpochMs: ctx.services.now() });
  });
