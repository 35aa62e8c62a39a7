import { z } from "zod";
import type { PrismaClient } from "../generated/prisma/client.ts";
import {
  type ArgsRedactor,
  type IntentSummary,
  SUMMARY_SELECT,
  type TenantScope,
  toIntentSummary,
} from "./intent-view.ts";
import { parseQueryInput } from "./query-input.ts";
import { type RunAbortView, runAbortView } from "./run-abort-view.ts";

/** Most records {@link getRun} returns for one run. */
export const MAX_RUN_RECORDS = 1000;

/** Result of {@link getRun}. */
export interface RunDetail {
  runId: string;
  /** The run's intent records in the order they were created (then by key). */
  records: IntentSummary[];
  /** True when the run has more than {@link MAX_RUN_RECORDS} records (only the first are returned). */
  truncated: boolean;
  /**
   * The run's declared plan (`runs.plan`), or null when none was declared. A run with a plan and no
   * record yet (the agent has not made its first call) has `records: []`.
   */
  plan: RunPlanView | null;
  /** The run's abort (who, when, why) and its steps by where they stand; null when it was never aborted. */
  abort: RunAbortView | null;
}

/** A run's declared plan: its steps in order and when it was (last) declared, epoch ms. */
export interface RunPlanView {
  steps: { stepId: string; tool: string }[];
  declaredAtEpochMs: number;
}

function planSteps(json: unknown): RunPlanView["steps"] {
  if (!Array.isArray(json)) return [];
  return json.flatMap((s: unknown) => {
    const step = s as { stepId?: unknown; tool?: unknown } | null;
    return typeof step?.stepId === "string" && typeof step.tool === "string"
      ? [{ stepId: step.stepId, tool: step.tool }]
      : [];
  });
}

/**
 * An agent run's intent records (its steps), oldest first, from the hot table and the archive
 * (records past retention), and its declared plan.
 * @param options.redact - rewrites each record's args (masking; issue 5), default none.
 * @param options.tenant - only this tenant's run ({@link TenantScope}); without it, the run id in every tenant.
 * @returns null when the run has no records, no declared plan and no abort (in the tenant). Without a
 *   tenant, the plan is the first tenant's that has one (run ids are unique per tenant).
 * @throws QueryInputError (field `runId`) when the run id is empty or too long.
 */
export async function getRun(
  prisma: PrismaClient,
  runId: string,
  options: { redact?: ArgsRedactor } & TenantScope = {},
): Promise<RunDetail | null> {
  parseQueryInput(z.object({ runId: z.string().min(1, "must not be empty").max(200) }), { runId });
  const query = {
    where: { ...(options.tenant !== undefined ? { tenant: options.tenant } : {}), runId },
    orderBy: [{ createdAt: "asc" as const }, { key: "asc" as const }],
    take: MAX_RUN_RECORDS + 1,
    select: SUMMARY_SELECT,
  };
  // Settled records past retention are in the archive (`archiveIntents`); a run may straddle both.
  const [hot, archived, plan, abort] = await Promise.all([
    prisma.intentRecord.findMany(query),
    prisma.intentRecordArchive.findMany(query),
    prisma.runPlan.findFirst({ where: query.where, orderBy: { tenant: "asc" } }),
    prisma.runAbort.findFirst({ where: query.where, orderBy: { tenant: "asc" } }),
  ]);
  const rows = [...archived, ...hot]
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .slice(0, MAX_RUN_RECORDS + 1);
  if (rows.length === 0 && !plan && !abort) return null;
  const records = rows.slice(0, MAX_RUN_RECORDS).map((row) => toIntentSummary(row, options.redact));
  return {
    runId,
    records,
    truncated: rows.length > MAX_RUN_RECORDS,
    plan: plan ? { steps: planSteps(plan.steps), declaredAtEpochMs: plan.updatedAt.getTime() } : null,
    abort: abort ? runAbortView(abort, records) : null,
  };
}
