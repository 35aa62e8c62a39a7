/**
 * The campaign's agent: it replays one τ-bench task's ground-truth actions through the executor's
 * HTTP API the way a real agent would. One run per task, one step per action, a fresh deadline per
 * call. When the executor does not answer (connection refused or reset, timeout, 5xx) it asks for the
 * same run/step again — always safe — on the next replica; a 503 or 429 waits `Retry-After` first.
 */
import type { Envelope } from "@tristate/core";
import { catalogName } from "@tristate/example-tau-bench/catalog";
import type { ReplayTask } from "@tristate/example-tau-bench/replay";
import type { CallTiming } from "./deadline-checks.ts";

/** How the agent behaves. */
export interface AgentPolicy {
  /** Budget of one call (its deadline is now + this), ms. */
  turnMs: number;
  /** Attempts of a step that comes back FAILED_NO_EFFECT with `retry_safe`. */
  maxAttempts: number;
  /** Wait before asking again about an UNKNOWN step, ms. */
  pollMs: number;
  /** Asks about an UNKNOWN step at most this often before reporting it unresolved. */
  maxPolls: number;
  /** The whole task's time limit, ms (then the agent reports it unfinished). */
  taskMs: number;
}

/** What the agent ended with for one task. */
export interface AgentResult {
  runId: string;
  /** Per action: the last status it was told (`null`: never answered). */
  told: ({ status: Envelope["status"]; code?: string; resolution?: string } | null)[];
  /** Why it stopped before the last action (it reports to the user), or null when it went through. */
  stopped: "needs_human" | "unresolved" | "gave_up" | "aborted" | "timeout" | "api_error" | null;
  /** Per action: when its first call began, epoch ms (the abort check tells in-flight steps from later ones). */
  firstCallAt: number[];
  /** Calls made, and those the executor did not answer (connection errors, 5xx, timeouts). */
  calls: number;
  unanswered: number;
}

/** Hooks of {@link runAgent} (the `abortrace` fault races a run's calls through them). */
export interface AgentHooks {
  /** Awaited before every call (each attempt and each question about an UNKNOWN step), with the action's index. */
  beforeCall?(index: number): Promise<void>;
  /**
   * Told the index of the action whose call is in flight, and null once one was answered (a call no
   * replica answered may still run at the executor: it stays in flight until an answer comes).
   */
  onFlight?(index: number | null): void;
  /** Told how every call ended against the deadline it carried (the deadline checks). */
  onTiming?(timing: CallTiming): void;
}

/** Shared state of the agents: calls in flight now (read when a replica is killed). */
export interface AgentPool {
  urls: string[];
  agentKey: string;
  inFlight: number;
}

const FINAL_REFUSALS = new Set(["REJECTED", "INVALID_ARGUMENTS", "IDEMPOTENCY_CONFLICT", "UNKNOWN_TOOL"]);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Seconds of a `Retry-After` header as ms (default 500 ms). */
function retryAfterMs(res: Response): number {
  const s = Number(res.headers.get("retry-after"));
  return Number.isFinite(s) && s > 0 ? Math.min(s * 1000, 5000) : 500;
}

/** Why a POST got no usable answer: a 5xx/503/429 status, or none (gave up after the timeout, or refused/reset). */
type NoAnswer = { retryInMs: number } & ({ status: number } | { failed: "gave_up" | "lost" });

/** One POST to a tRPC mutation on one replica: the envelope, or why there was none. */
export async function post(
  pool: AgentPool,
  url: string,
  path: string,
  body: unknown,
  timeoutMs: number,
): Promise<{ data: unknown; status: number } | NoAnswer | { status: number; error: unknown }> {
  pool.inFlight++;
  try {
    const res = await fetch(`${url}/trpc/${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${pool.agentKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (res.status === 503 || res.status === 429) {
      await res.body?.cancel();
      return { retryInMs: retryAfterMs(res), status: res.status };
    }
    if (res.status >= 500) {
      await res.body?.cancel();
      return { retryInMs: 200, status: res.status };
    }
    const json = (await res.json()) as { result?: { data?: unknown }; error?: unknown };
    if (!res.ok || json.result?.data === undefined) return { status: res.status, error: json.error ?? json };
    return { data: json.result.data, status: res.status };
  } catch (error) {
    // Refused, reset, timed out: nothing known, the same call again is safe.
    const gaveUp = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    return { retryInMs: 200, failed: gaveUp ? "gave_up" : "lost" };
  } finally {
    pool.inFlight--;
  }
}

/**
 * Replays `task` as run `runId` on the service instance `tenant`. `halt()` is read between calls:
 * once it names a reason the agent stops there (its saga is being aborted, or the round is over).
 */
export async function runAgent(
  pool: AgentPool,
  task: ReplayTask,
  runId: string,
  tenant: string,
  policy: AgentPolicy,
  halt: () => "aborted" | "timeout" | null,
  random: () => number,
  hooks: AgentHooks = {},
): Promise<AgentResult> {
  const result: AgentResult = { runId, told: [], stopped: null, calls: 0, unanswered: 0, firstCallAt: [] };
  const end = Date.now() + policy.taskMs;
  let replica = Math.floor(random() * pool.urls.length);
  for (const [index, action] of task.actions.entries()) {
    result.told.push(null);
    let attempts = 0;
    let polls = 0;
    for (;;) {
      await hooks.beforeCall?.(index);
      result.stopped = halt() ?? (Date.now() > end ? "timeout" : null);
      if (result.stopped) return result;
      result.calls++;
      if (result.firstCallAt.length === index) result.firstCallAt.push(Date.now());
      hooks.onFlight?.(index);
      const url = pool.urls[replica % pool.urls.length] as string;
      const sentAt = Date.now();
      const deadlineEpochMs = sentAt + policy.turnMs;
      const stepId = `a${index}`;
      const answer = await post(
        pool,
        url,
        "calls.execute",
        {
          runId,
          stepId,
          tool: catalogName(task.domain, action.name),
          args: { ...action.kwargs, tenant },
          deadlineEpochMs,
        },
        policy.turnMs + 5000,
      );
      hooks.onTiming?.({
        runId,
        stepId,
        url,
        sentAt,
        deadlineEpochMs,
        endedAt: Date.now(),
        ...("failed" in answer ? { outcome: answer.failed } : { outcome: "answer", status: answer.status }),
      });
      if ("retryInMs" in answer) {
        // Unanswered: the call may still run at the executor, so it stays "in flight".
        result.unanswered++;
        replica++;
        await sleep(answer.retryInMs);
        continue;
      }
      hooks.onFlight?.(null);
      if ("error" in answer) {
        result.stopped = "api_error";
        result.told[index] = { status: "UNKNOWN", code: `API_${answer.status}` };
        return result;
      }
      const env = answer.data as Envelope;
      result.told[index] = {
        status: env.status,
        ...(env.error?.code ? { code: env.error.code } : {}),
        ...(env.resolution ? { resolution: env.resolution } : {}),
      };
      if (env.status === "SUCCEEDED") break;
      if (env.status === "FAILED_NO_EFFECT") {
        const code = env.error?.code ?? "";
        if (code === "REJECTED") break; // the domain refused; the oracle goes on too
        if (env.retry_safe && !FINAL_REFUSALS.has(code) && ++attempts < policy.maxAttempts) {
          // A new attempt is under way: until it is answered the agent knows of no outcome (an
          // aborted saga or a lost answer may leave it so).
          result.told[index] = null;
          await sleep(env.error?.retryAfterMs ?? 250 * attempts);
          continue;
        }
        // Refused because its run was aborted (issue 20): the agent stops and says so.
        result.stopped = /ABORT/.test(code) ? "aborted" : "gave_up";
        return result;
      }
      if (env.resolution === "needs_human") {
        result.stopped = "needs_human";
        return result;
      }
      if (++polls > policy.maxPolls) {
        result.stopped = "unresolved";
        return result;
      }
      await sleep(policy.pollMs);
    }
  }
  return result;
}
