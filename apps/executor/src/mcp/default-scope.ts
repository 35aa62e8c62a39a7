/**
 * The run of an MCP call that names none (`io.tristate/runId` absent), issue 20 §3, DESIGN.md rule 15:
 * a dedup scope never lives only in one process's memory. An MCP session does (the server ends it on
 * idle, restart, another replica, its own per-key limit, and a client that follows the protocol opens
 * a new one and repeats the call), so the default run is made of durable facts only: the caller's
 * identity (the API key's id) and a time window.
 *
 * - Windows are `2 × windowMs` long, aligned on the epoch (UTC); the run of window `n` is
 *   `mcp-<key id>-<window start, ISO 8601 UTC>`. The step stays the tool and its canonical identity
 *   (`mcp:<tool>:<hash>`, run-step.ts), so the first call and its repeat share (run, step, tool).
 * - A call in the first half of its window looks the same call up in the window before (in the second
 *   half: in the window after): when the tenant's log holds the record of the same (run, step, tool,
 *   identity) there (its idempotency key), the call takes that run. So a repeat whose time is within
 *   `windowMs` of the first call's (either way: replicas' clocks may differ by less than that) always
 *   finds the first record, wherever a window edge falls; repeats further apart may (never beyond
 *   `3 × windowMs`). The look-up is one read by primary key.
 * - Residual: two calls with the same tool and identity **in flight at the same moment** on both sides
 *   of a window edge (edges are `2 × windowMs` apart) may claim in two runs: each looks before the
 *   other's claim committed. A client that needs exactness at every instant names its run
 *   (`io.tristate/runId`); the default is for clients that name nothing.
 */
import { DEFAULT_RESERVE_MS, type Deadline, type Executor } from "@tristate/core";

/** What the default scope needs from the service: who calls, the window, and a look-up in the log. */
export interface DefaultScope {
  /** The caller's durable identity: the API key's id (never the session's). */
  callerId: string;
  /** `TRISTATE_MCP_DEFAULT_SCOPE_MS`: a repeat within this long of the first call finds it, ms. */
  windowMs: number;
  /**
   * Whether the tenant's intent log holds a record with this idempotency key.
   * @throws whatever the store throws (the call then fails before anything is sent).
   */
  hasRecord(key: string): Promise<boolean>;
}

/** The shape of a default-scope run id: `mcp-<key id>-<window start, ISO 8601 UTC with ms>`. */
const DEFAULT_SCOPE_RUN = /^mcp-.+-\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Whether `runId` is a default-scope run ({@link scopeRuns}): one run for every MCP conversation of
 * one key in its window, which a run abort would abort all at once.
 */
export function isDefaultScopeRun(runId: string): boolean {
  return DEFAULT_SCOPE_RUN.test(runId);
}

/** The run of the default scope's window that holds `epochMs`, and its neighbour nearest to `epochMs`. */
export function scopeRuns(callerId: string, epochMs: number, windowMs: number): { current: string; neighbour: string } {
  if (!Number.isSafeInteger(windowMs) || windowMs <= 0) {
    throw new RangeError(`windowMs: must be a positive integer number of ms (got ${windowMs})`);
  }
  const length = 2 * windowMs;
  const index = Math.floor(epochMs / length);
  const firstHalf = epochMs - index * length < windowMs;
  const runOf = (i: number) => `mcp-${callerId}-${new Date(i * length).toISOString()}`;
  return { current: runOf(index), neighbour: runOf(firstHalf ? index - 1 : index + 1) };
}

/**
 * The run of a call that names none: the neighbour window's run when the log holds this very call
 * there (same step, tool and identity), else the current window's. The look-up waits no longer than
 * the turn's deadline minus the reserve (rule 14).
 * @param nowEpochMs the replica's now, epoch ms.
 * @returns the run, or null when the look-up did not answer in time (nothing may be sent then).
 * @throws whatever {@link DefaultScope.hasRecord} throws.
 */
export async function defaultScopeRun(
  scope: DefaultScope,
  executor: Pick<Executor, "keyFor">,
  call: { stepId: string; tool: string; args: Record<string, unknown> },
  nowEpochMs: number,
  deadline: Deadline,
): Promise<string | null> {
  const { current, neighbour } = scopeRuns(scope.callerId, nowEpochMs, scope.windowMs);
  let key: string;
  try {
    key = executor.keyFor({ runId: neighbour, stepId: call.stepId, tool: call.tool, args: call.args });
  } catch {
    return current; // arguments the tool refuses: the executor answers that, writing nothing
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), Math.max(0, deadline.remainingMs() - DEFAULT_RESERVE_MS));
  });
  try {
    const found = await Promise.race([scope.hasRecord(key), late]);
    return found === null ? null : found ? neighbour : current;
  } finally {
    clearTimeout(timer);
  }
}
