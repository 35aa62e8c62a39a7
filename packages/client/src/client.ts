import type {
  AbortReport,
  Envelope,
  ExecuteWireInput,
  IntentRecordView,
  PlanAnswer,
  PlanStep,
  ToolInfo,
} from "./api-types.ts";
import { callProcedure, type Transport } from "./wire.ts";

/** Anything with an absolute deadline in epoch ms, e.g. `Deadline` of `@tristate/core`. */
export interface DeadlineLike {
  /** The deadline, epoch ms. */
  readonly epochMs: number;
}

/** The turn's time limit: at most one of the three. Without any, the executor's default budget applies. */
export interface TurnTime {
  /** The turn's one deadline, epoch ms, passed through as is (the executor caps it at its limit). */
  deadlineEpochMs?: number;
  /** The same as a `Deadline` (its `epochMs` is sent as `deadlineEpochMs`). */
  deadline?: DeadlineLike;
  /** Or a budget from now, ms. */
  budgetMs?: number;
}

/** One tool call of an agent's turn (`calls.execute`). */
export interface ExecuteInput extends TurnTime {
  /** The run (1–200 printable ASCII characters, no spaces). */
  runId: string;
  /**
   * The step of the run; the same run, step, tool and identity is the same effect. Absent: the
   * executor derives it from the tool and the arguments' canonical identity (`auto:<tool>:<hash>`),
   * so a repeat of the same call is the same step and a call with another identity (another order's
   * refund) another; two deliberate calls with the same identity need two named steps.
   */
  stepId?: string;
  /** The catalog's tool name. */
  tool: string;
  /** The tool's arguments (validated by the executor against the tool's schema). */
  args: Record<string, unknown>;
  /**
   * An operator's confirmation for a tool with a confirmation policy (`confirmations.issue`): it
   * confirms one run, step and tool with exactly the argument values shown; any other value is
   * refused before sending (`CONFIRMATION_REQUIRED`, `error.field` `args.<name>`).
   */
  confirmationToken?: string;
}

/** Per-request options. */
export interface RequestOptions {
  /** Abandons the request. Once it may have been sent, the outcome is UNKNOWN (repeat it to learn more). */
  signal?: AbortSignal;
}

/** How to reach the executor. */
export interface TristateClientOptions {
  /** The executor's base URL, e.g. `http://127.0.0.1:4100` (the API is under `/trpc/`). */
  url: string;
  /** An API key (`ts_agent_…` for agents); sent as `Authorization: Bearer`. */
  apiKey: string;
  /** The `fetch` to use. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Extra headers for every request. */
  headers?: Record<string, string>;
  /**
   * How long to wait for an answer when the call carries no deadline (reads, and calls that use the
   * executor's default budget), ms. @default 45000
   */
  timeoutMs?: number;
  /**
   * How long after a call's deadline to keep waiting for the executor's answer, ms (the executor
   * answers by the deadline; this covers clock skew and the trip back). @default 5000
   */
  answerGraceMs?: number;
}

/**
 * The executor's API for agents. Every method returns the procedure's answer as is.
 *
 * Errors: {@link TristateApiError} subclasses for refusals (400/401/403/404/409/413/429, with `field`),
 * {@link TristateTransportError} when no usable answer came (`outcome` FAILED_NO_EFFECT when nothing
 * was sent, else UNKNOWN; repeating the same call is safe either way).
 */
export interface TristateClient {
  /**
   * Runs one tool call (`calls.execute`) and returns its Envelope as is — read `status` and
   * `retry_safe`, not exceptions: FAILED_NO_EFFECT and UNKNOWN are envelopes, not errors.
   * @throws TristateBadRequestError for invalid input (`field` names it; `detail` is the envelope for bad `args`).
   * @throws TristateNotFoundError for an unknown tool (`field: "tool"`).
   * @throws TristateTransportError when no answer came (`outcome` says whether it may have been delivered).
   */
  execute(input: ExecuteInput, options?: RequestOptions): Promise<Envelope>;
  /**
   * Aborts a run (`runs.abort`): recorded with the run first (this key, `reason`, the server's time),
   * so a new step of the run is refused and a step still in flight is undone when it settles;
   * unsettled effects reconciled, confirmed ones compensated latest step first, UNKNOWN ones left for
   * a person. Idempotent (a later abort keeps the first one's who and why).
   * @param run the run id, or `{ runId, reason?, deadlineEpochMs? | budgetMs? }`.
   * @param time the turn's deadline when `run` is an id.
   */
  abortRun(
    run: string | ({ runId: string; reason?: string } & TurnTime),
    time?: TurnTime,
    options?: RequestOptions,
  ): Promise<AbortReport>;
  /**
   * Declares (or replaces) a run's plan (`runs.plan`): irreversible steps are then refused until the
   * fallible steps after them are done.
   * @param run the run id with `steps`, or `{ runId, steps }`.
   * @throws TristateBadRequestError naming the step (`steps.<i>.tool`, `steps.<i>.stepId`).
   */
  declarePlan(
    run: string | { runId: string; steps: PlanStep[] },
    steps?: PlanStep[],
    options?: RequestOptions,
  ): Promise<PlanAnswer>;
  /** The catalog (`tools.list`): each tool's kind, JSON Schema of its arguments, identity fields, probes. */
  tools(options?: RequestOptions): Promise<ToolInfo[]>;
  /** The system-prompt rule that goes with envelopes (`prompt.rule`): add it to the agent's instructions. */
  promptRule(options?: RequestOptions): Promise<string>;
  /**
   * The intent record of an idempotency key (`calls.get`).
   * @param key the envelope's `idempotency_key` (32 hex characters), or `{ key }`.
   * @throws TristateNotFoundError when there is no such record.
   */
  get(key: string | { key: string }, options?: RequestOptions): Promise<IntentRecordView>;
}

/** The wire's `deadlineEpochMs` / `budgetMs` of a {@link TurnTime}. */
function wireTime(time: TurnTime | undefined): { deadlineEpochMs?: number; budgetMs?: number } {
  if (!time) return {};
  const deadlineEpochMs = time.deadlineEpochMs ?? time.deadline?.epochMs;
  return {
    ...(deadlineEpochMs !== undefined ? { deadlineEpochMs } : {}),
    ...(time.budgetMs !== undefined ? { budgetMs: time.budgetMs } : {}),
  };
}

/**
 * Creates a client. Nothing is sent until a method is called.
 * @throws TypeError when `url` is not an http(s) URL or `apiKey` is empty.
 */
export function createTristateClient(options: TristateClientOptions): TristateClient {
  const parsed = new URL(options.url);
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new TypeError(`url must be http(s), got ${parsed.protocol}`);
  }
  if (!options.apiKey) throw new TypeError("apiKey must not be empty");
  const transport: Transport = {
    baseUrl: options.url,
    apiKey: options.apiKey,
    fetch: options.fetch ?? ((...args) => globalThis.fetch(...args)),
    headers: { ...options.headers },
  };
  const timeoutMs = options.timeoutMs ?? 45_000;
  const graceMs = options.answerGraceMs ?? 5_000;
  /** How long to wait for a call that carries `time`. */
  const waitFor = (time: { deadlineEpochMs?: number; budgetMs?: number }) => {
    if (time.deadlineEpochMs !== undefined) return Math.max(1, time.deadlineEpochMs - Date.now()) + graceMs;
    if (time.budgetMs !== undefined) return time.budgetMs + graceMs;
    return timeoutMs;
  };
  const query = <T>(procedure: string, input: unknown, requestOptions?: RequestOptions) =>
    callProcedure<T>(transport, { kind: "query", procedure, input, timeoutMs, signal: requestOptions?.signal });

  return {
    execute(input, requestOptions) {
      const { deadline: _deadline, deadlineEpochMs: _at, budgetMs: _budget, ...call } = input;
      const time = wireTime(input);
      const wire: ExecuteWireInput = { ...call, ...time };
      return callProcedure<Envelope>(transport, {
        kind: "mutation",
        procedure: "calls.execute",
        input: wire,
        timeoutMs: waitFor(time),
        signal: requestOptions?.signal,
      });
    },
    abortRun(run, time, requestOptions) {
      const runId = typeof run === "string" ? run : run.runId;
      const reason = typeof run === "string" ? undefined : run.reason;
      const wire = {
        runId,
        ...(reason !== undefined ? { reason } : {}),
        ...wireTime(typeof run === "string" ? time : { ...run, ...time }),
      };
      return callProcedure<AbortReport>(transport, {
        kind: "mutation",
        procedure: "runs.abort",
        input: wire,
        timeoutMs: waitFor(wire),
        signal: requestOptions?.signal,
      });
    },
    declarePlan(run, steps, requestOptions) {
      const input =
        typeof run === "string" ? { runId: run, steps: steps ?? [] } : { runId: run.runId, steps: run.steps };
      return callProcedure<PlanAnswer>(transport, {
        kind: "mutation",
        procedure: "runs.plan",
        input,
        timeoutMs,
        signal: requestOptions?.signal,
      });
    },
    tools: (requestOptions) => query<ToolInfo[]>("tools.list", undefined, requestOptions),
    async promptRule(requestOptions) {
      return (await query<{ rule: string }>("prompt.rule", undefined, requestOptions)).rule;
    },
    get: (key, requestOptions) =>
      query<IntentRecordView>("calls.get", typeof key === "string" ? { key } : { key: key.key }, requestOptions),
  };
}
