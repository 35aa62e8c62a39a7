/**
 * The replay's abort fault (`--abort-share R`): a seeded share of the runs is aborted mid-plan,
 * through the executor's API, while one of its write calls is in flight — `runs.abort` with the
 * agent's key, or `runs.operatorAbort` with the admin's (the dashboard's path), half each. The agent
 * does not know: it goes on with its plan, and its next call waits until the abort was answered (an
 * agent still mid-turn after the abort completed). Each aborted run is then judged from the remote's
 * effect log once its records settled (`scoreAbortedRun`).
 */
import { deriveSeed, mulberry32 } from "../service/rng.ts";
import { REVERSALS } from "./abort-scoring.ts";
import type { ReplayAction } from "./agents.ts";

/** How one run is aborted. */
export interface AbortPlan {
  /** The step (action index, a write) whose call the abort races. */
  atStep: number;
  /** How long after that call began the abort is sent, ms. */
  delayMs: number;
  via: "runs.abort" | "runs.operatorAbort";
}

/** What came of one abort. */
export interface AbortOutcome {
  plan: AbortPlan;
  /** When the abort was sent and answered, epoch ms (`answeredAt` null: it was not answered). */
  sentAt: number;
  answeredAt: number | null;
  /** The report's `complete` and each step's outcome (`a1:in_flight`), or the error. */
  complete?: boolean;
  steps?: string[];
  error?: string;
}

/** Longest delay between the raced call's start and the abort, ms (claim and send take a few ms). */
const MAX_DELAY_MS = 40;

/**
 * Whether (and how) the task's run is aborted: a draw from `seed` and the task id below `share`
 * aborts it, at its compensable write if it has one (`airline.book_reservation`), else at a random
 * write. Tasks without a write are never aborted (nothing to undo or to refuse).
 */
export function abortPlanOf(
  task: { id: string; domain: string; actions: readonly ReplayAction[] },
  share: number,
  seed: number,
): AbortPlan | null {
  const random = mulberry32(deriveSeed(seed, `abort:${task.id}`));
  if (!(random() < share)) return null;
  const writes = [...task.actions.keys()].filter((i) => task.actions[i]?.write);
  if (writes.length === 0) return null;
  const compensable = writes.filter((i) => REVERSALS[`${task.domain}.${task.actions[i]?.name}`]);
  const from = compensable.length ? compensable : writes;
  const atStep = from[Math.floor(random() * from.length)] as number;
  const delayMs = Math.floor(random() * MAX_DELAY_MS);
  return { atStep, delayMs, via: random() < 0.5 ? "runs.abort" : "runs.operatorAbort" };
}

/** Keys of the executor API the abort needs. */
export interface AbortKeys {
  executorUrl: string;
  agentKey: string;
  adminKey: string;
}

/** Sends the abort of `runId` as planned (agent key for `runs.abort`, admin key for `runs.operatorAbort`). */
export async function sendAbort(keys: AbortKeys, plan: AbortPlan, runId: string): Promise<AbortOutcome> {
  const sentAt = Date.now();
  const operator = plan.via === "runs.operatorAbort";
  const body = operator ? { runId, note: "τ-bench replay: abort fault" } : { runId, budgetMs: 20_000 };
  try {
    const res = await fetch(`${keys.executorUrl}/trpc/${plan.via}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${operator ? keys.adminKey : keys.agentKey}`,
        "content-type": "application/json",
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const json = (await res.json()) as {
      result?: { data?: { complete?: boolean; steps?: { stepId: string; outcome: string }[] } };
      error?: unknown;
    };
    const report = json.result?.data;
    if (!res.ok || !report)
      return { plan, sentAt, answeredAt: null, error: `${res.status} ${JSON.stringify(json.error)}` };
    return {
      plan,
      sentAt,
      answeredAt: Date.now(),
      ...(report.complete !== undefined ? { complete: report.complete } : {}),
      steps: (report.steps ?? []).map((s) => `${s.stepId}:${s.outcome}`),
    };
  } catch (error) {
    return { plan, sentAt, answeredAt: null, error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * The agent's hook for an aborted run: when step `atStep` is called, the abort is sent `delayMs`
 * later (racing that call); every later step waits for the abort's answer before it is called.
 * `outcome()` resolves once the abort was answered (or failed).
 */
export function abortDriver(
  keys: AbortKeys,
  plan: AbortPlan,
  runId: string,
): { beforeCall(index: number): Promise<void>; outcome(): Promise<AbortOutcome | null> } {
  let sent: Promise<AbortOutcome> | null = null;
  return {
    async beforeCall(index) {
      if (index === plan.atStep && !sent) {
        sent = new Promise((r) => setTimeout(r, plan.delayMs)).then(() => sendAbort(keys, plan, runId));
      } else if (index > plan.atStep && sent) {
        await sent;
      }
    },
    outcome: () => sent ?? Promise.resolve(null),
  };
}

/** A record as `runs.get` gives it (the fields the abort's judgement reads). */
export interface RunRecord {
  key: string;
  stepId: string;
  tool: string;
  args: unknown;
  status: string;
  needsHuman: boolean;
}

/** The run's records (`runs.get`); none when the run has no record. */
export async function fetchRunRecords(executorUrl: string, adminKey: string, runId: string): Promise<RunRecord[]> {
  const input = encodeURIComponent(JSON.stringify({ runId }));
  const res = await fetch(`${executorUrl}/trpc/runs.get?input=${input}`, {
    headers: { authorization: `Bearer ${adminKey}` },
  });
  if (res.status === 404) return [];
  if (!res.ok) throw new Error(`runs.get ${runId} → ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { result: { data: { records: RunRecord[] } } };
  return body.result.data.records.map((r) => ({
    key: r.key,
    stepId: r.stepId,
    tool: r.tool,
    args: r.args,
    status: r.status,
    needsHuman: r.needsHuman,
  }));
}

/**
 * Records not settled yet: PENDING, UNKNOWN outside the human queue, and a confirmed compensable
 * effect whose compensation has no settled record yet while nothing waits for a person (its undo may
 * still be on its way). Only a reason to wait longer: the judgement itself reads the remote.
 */
function unsettledCount(records: readonly RunRecord[]): number {
  const open = (r: RunRecord) => r.status === "PENDING" || (r.status === "UNKNOWN" && !r.needsHuman);
  const undone = (r: RunRecord) =>
    r.status !== "SUCCEEDED" ||
    !REVERSALS[r.tool] ||
    r.needsHuman ||
    records.some((c) => c.stepId.endsWith(`:${r.key}`) && (c.status === "SUCCEEDED" || c.needsHuman));
  return records.filter((r) => open(r) || (!r.stepId.includes(":") && !undone(r))).length;
}

/**
 * Waits until no record of the runs is PENDING or UNKNOWN outside the human queue (the sweeper has
 * finished the undos of steps that settled after their abort), at most `timeoutMs`.
 * @returns how long it waited, ms, and how many records were still unsettled then.
 */
export async function waitRunsSettled(
  executorUrl: string,
  adminKey: string,
  runIds: readonly string[],
  timeoutMs: number,
): Promise<{ waitedMs: number; unsettled: number }> {
  const t0 = Date.now();
  let left = [...runIds];
  let open = 0;
  while (left.length) {
    const counts = await Promise.all(
      left.map(async (id) => unsettledCount(await fetchRunRecords(executorUrl, adminKey, id))),
    );
    left = left.filter((_, i) => (counts[i] ?? 0) > 0);
    open = counts.reduce((a, b) => a + b, 0);
    if (!left.length || Date.now() - t0 > timeoutMs) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  return { waitedMs: Date.now() - t0, unsettled: open };
}
