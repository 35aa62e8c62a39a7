/**
 * The scripted agents of the replay (no model): each replays one task's ground-truth actions in
 * order. The Tristate agent goes through the executor's HTTP API (`calls.execute`, one run per task,
 * one step per action) and reads envelopes as a sensible agent would; the two baselines call the
 * domain service directly ("retry on any error" and "never retry").
 */
import type { Envelope } from "@tristate/core";
import { catalogName, isDomainError, segment } from "../catalog/tools.ts";
import type { DomainName } from "../domain/database.ts";

/** The three agents of a replay. */
export const AGENTS = ["tristate", "retry_any", "never_retry"] as const;
/** One of {@link AGENTS}. */
export type AgentName = (typeof AGENTS)[number];

/** One ground-truth action in plain JSON form. */
export interface ReplayAction {
  name: string;
  kwargs: Record<string, unknown>;
  /** True for a write tool. */
  write: boolean;
}

/** What happened to one action. */
export interface ActionOutcome {
  index: number;
  tool: string;
  write: boolean;
  /**
   * Final status as the agent understood it: the envelope's status (Tristate), or `SUCCEEDED` /
   * `DOMAIN_ERROR` (a 200 with `Error: …`) / `FAILED` (transport error or non-2xx) for baselines.
   */
  status: "SUCCEEDED" | "FAILED_NO_EFFECT" | "UNKNOWN" | "DOMAIN_ERROR" | "FAILED";
  /** Requests the agent made for this action (calls to the executor, or to the service). */
  calls: number;
  /** Ambiguous outcomes the agent saw (UNKNOWN envelopes; baselines: timeouts, resets, 5xx). */
  ambiguous: number;
  /** Tristate: the final envelope's resolution (`found`, `absent_resent`, `needs_human`). */
  resolution?: string;
  /** Tristate: the final envelope's error code; baselines: the last error. */
  error?: string;
  /** The domain output, when there was one. */
  output?: string | null;
}

/** One agent's run of one task. */
export interface AgentRun {
  agent: AgentName;
  taskId: string;
  actions: ActionOutcome[];
  /** Why the agent stopped before the last action (it reports to the user instead), if it did. */
  stopped: { at: number; reason: "needs_human" | "unresolved" | "gave_up" } | null;
  /** Tristate: per action, when its first call began (epoch ms; `null`: never called). */
  firstCallAt?: (number | null)[];
}

/** Hooks of {@link runTristateAgent} (the replay's abort fault). */
export interface AgentHooks {
  /** Awaited before every call of a step (each attempt and poll), with the action's index. */
  beforeCall?(index: number): Promise<void>;
}

/** How the Tristate agent reads envelopes. */
export interface TristatePolicy {
  /** Budget of one turn (each call is one turn), ms. @default 30000 */
  turnMs: number;
  /** Attempts of a step while it comes back FAILED_NO_EFFECT with `retry_safe`. @default 3 */
  maxAttempts: number;
  /** Backoff before attempt n+1: `backoffMs × 2^(n-1)`, or the envelope's `retryAfterMs`. @default 250 */
  backoffMs: number;
  /** Calls again for an UNKNOWN step (to read the reconciled status) at most this often. @default 6 */
  maxPolls: number;
  /** Wait before asking again about an UNKNOWN step, ms. @default 1500 */
  pollMs: number;
}

/** Default {@link TristatePolicy}. */
export const DEFAULT_TRISTATE_POLICY: TristatePolicy = {
  turnMs: 30_000,
  maxAttempts: 3,
  backoffMs: 250,
  maxPolls: 6,
  pollMs: 1500,
};

/** One `calls.execute` input. */
export interface ExecuteInput {
  runId: string;
  stepId: string;
  tool: string;
  args: Record<string, unknown>;
  deadlineEpochMs: number;
}

/** Anything that executes a call and returns an envelope (the HTTP client, or a fake in tests). */
export type ExecuteFn = (input: ExecuteInput) => Promise<Envelope>;

/** Raised for a non-2xx answer of the executor API. */
export class ExecutorApiError extends Error {
  override readonly name = "ExecutorApiError";
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`executor API answered ${status}: ${JSON.stringify(body).slice(0, 300)}`);
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * `calls.execute` over HTTP (tRPC without a transformer: the input is the body, the envelope comes
 * back as `result.data`), with an agent key.
 */
export function httpExecute(executorUrl: string, agentKey: string, timeoutMs = 60_000): ExecuteFn {
  return async (input) => {
    const res = await fetch(`${executorUrl}/trpc/calls.execute`, {
      method: "POST",
      headers: { authorization: `Bearer ${agentKey}`, "content-type": "application/json" },
      body: JSON.stringify(input),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await res.json()) as { result?: { data?: Envelope }; error?: unknown };
    if (!res.ok || !body.result?.data) throw new ExecutorApiError(res.status, body.error ?? body);
    return body.result.data;
  };
}

/** Codes of a FAILED_NO_EFFECT that a repeat of the same call cannot change. */
const FINAL_REFUSALS = new Set(["REJECTED", "INVALID_ARGUMENTS", "IDEMPOTENCY_CONFLICT", "UNKNOWN_TOOL"]);

/**
 * The Tristate agent: one run per task (`runId`), one step per action (`a<index>`), each call its
 * own turn with a deadline. SUCCEEDED → next action. FAILED_NO_EFFECT with `retry_safe` → the same
 * step again (same key), at most `maxAttempts`, with backoff — unless the remote refused the request
 * itself (`REJECTED`: τ-bench's `Error: …`, which a repeat would only repeat; the agent reports it
 * and goes on, as the oracle does). UNKNOWN (`retry_safe` false) → it does not redo anything: it asks
 * again about the same step later (the executor reconciles: probes, a same-key resend, never a blind
 * resend) and, when the record waits for a human or stays unresolved, stops the task and reports.
 */
export async function runTristateAgent(
  execute: ExecuteFn,
  task: { id: string; domain: DomainName; actions: ReplayAction[] },
  runId: string,
  tenant: string,
  policy: TristatePolicy = DEFAULT_TRISTATE_POLICY,
  hooks: AgentHooks = {},
): Promise<AgentRun> {
  const run: AgentRun = { agent: "tristate", taskId: task.id, actions: [], stopped: null, firstCallAt: [] };
  for (const [index, action] of task.actions.entries()) {
    const outcome: ActionOutcome = {
      index,
      tool: action.name,
      write: action.write,
      status: "UNKNOWN",
      calls: 0,
      ambiguous: 0,
    };
    run.actions.push(outcome);
    let attempts = 0;
    let polls = 0;
    let apiErrors = 0;
    for (;;) {
      let env: Envelope;
      await hooks.beforeCall?.(index);
      if (run.firstCallAt?.length === index) run.firstCallAt.push(Date.now());
      try {
        outcome.calls++;
        env = await execute({
          runId,
          stepId: `a${index}`,
          tool: catalogName(task.domain, action.name),
          args: { ...action.kwargs, tenant },
          deadlineEpochMs: Date.now() + policy.turnMs,
        });
      } catch (error) {
        // The executor itself did not answer: asking again for the same step is always safe.
        if (error instanceof ExecutorApiError && error.status >= 400 && error.status < 500) {
          outcome.status = "FAILED_NO_EFFECT";
          outcome.error = `API_${error.status}`;
          break;
        }
        if (++apiErrors >= policy.maxAttempts) {
          outcome.error = "EXECUTOR_UNREACHABLE";
          break;
        }
        await sleep(policy.backoffMs * 2 ** (apiErrors - 1));
        continue;
      }
      outcome.status = env.status;
      outcome.resolution = env.resolution;
      outcome.error = env.error?.code;
      const result = env.result as { output?: string | null } | undefined;
      if (result && "output" in result) outcome.output = result.output ?? null;
      if (env.status === "SUCCEEDED") break;
      if (env.status === "FAILED_NO_EFFECT") {
        attempts++;
        const code = env.error?.code ?? "";
        if (code === "REJECTED" && isDomainError(env.error?.message)) outcome.output = env.error?.message ?? null;
        if (env.retry_safe && !FINAL_REFUSALS.has(code) && attempts < policy.maxAttempts) {
          await sleep(env.error?.retryAfterMs ?? policy.backoffMs * 2 ** (attempts - 1));
          continue;
        }
        break;
      }
      // UNKNOWN: retry_safe is false — never redo; ask about the same step later.
      outcome.ambiguous++;
      if (env.resolution === "needs_human" || ++polls > policy.maxPolls) break;
      await sleep(policy.pollMs);
    }
    if (outcome.status === "UNKNOWN") {
      run.stopped = { at: index, reason: outcome.resolution === "needs_human" ? "needs_human" : "unresolved" };
      break;
    }
    if (outcome.status === "FAILED_NO_EFFECT" && outcome.error !== "REJECTED") {
      run.stopped = { at: index, reason: "gave_up" };
      break;
    }
  }
  return run;
}

/** Options of the baselines. */
export interface BaselineOptions {
  /** Per-request timeout, ms (the catalog's write timeout). @default 3000 */
  timeoutMs: number;
  /** Attempts per action for "retry on any error". @default 3 */
  maxAttempts: number;
  /** Wait between attempts, ms. @default 250 */
  backoffMs: number;
}

/** Default {@link BaselineOptions}. */
export const DEFAULT_BASELINE_OPTIONS: BaselineOptions = { timeoutMs: 3000, maxAttempts: 3, backoffMs: 250 };

/** One direct request to the domain service. */
export type DirectCall = (
  url: string,
  body: Record<string, unknown>,
  timeoutMs: number,
) => Promise<{ status: number; output?: string | null } | { error: string }>;

/** The plain HTTP call of the baselines: a new request each time, no key. */
export const directFetch: DirectCall = async (url, body, timeoutMs) => {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let output: string | null | undefined;
    try {
      output = (JSON.parse(text) as { output?: string | null }).output;
    } catch {
      output = undefined;
    }
    return { status: res.status, output };
  } catch (error) {
    const e = error as { name?: string; cause?: { code?: string } };
    return { error: e.name === "TimeoutError" ? "timeout" : (e.cause?.code ?? e.name ?? "error") };
  }
};

/**
 * A baseline agent calling the domain service directly, without the executor. `retry_any` retries
 * any transport error or 5xx (a new request, no key) up to `maxAttempts` attempts; `never_retry`
 * makes one attempt. Neither knows whether a failed request took effect; both go on with the next
 * action, like an agent told "the tool failed".
 */
export async function runBaselineAgent(
  agent: "retry_any" | "never_retry",
  serviceUrl: string,
  task: { id: string; domain: DomainName; actions: ReplayAction[] },
  tenant: string,
  options: BaselineOptions = DEFAULT_BASELINE_OPTIONS,
  call: DirectCall = directFetch,
): Promise<AgentRun> {
  const run: AgentRun = { agent, taskId: task.id, actions: [], stopped: null };
  const maxAttempts = agent === "retry_any" ? options.maxAttempts : 1;
  for (const [index, action] of task.actions.entries()) {
    const outcome: ActionOutcome = {
      index,
      tool: action.name,
      write: action.write,
      status: "FAILED",
      calls: 0,
      ambiguous: 0,
    };
    run.actions.push(outcome);
    const url = `${serviceUrl}/${segment(task.domain, tenant)}/tools/${action.name}`;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      outcome.calls++;
      const answer = await call(url, action.kwargs, options.timeoutMs);
      if ("status" in answer && answer.status >= 200 && answer.status < 300) {
        outcome.output = answer.output ?? null;
        outcome.status = isDomainError(answer.output) ? "DOMAIN_ERROR" : "SUCCEEDED";
        outcome.error = undefined;
        break;
      }
      const retryable = "error" in answer || answer.status >= 500;
      outcome.error = "error" in answer ? answer.error : `HTTP_${answer.status}`;
      if (retryable) outcome.ambiguous++;
      if (!retryable || attempt === maxAttempts) break;
      await sleep(options.backoffMs);
    }
  }
  return run;
}
