/**
 * The API's shapes, derived from the executor's router type (a type-only import: nothing of the
 * server is loaded at run time). When a procedure's input or output changes in apps/executor, this
 * package's type check fails instead of drifting silently.
 */
import type { AppRouter } from "@tristate/executor/router";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";

/** Every procedure's input, as the router declares it. */
export type RouterInputs = inferRouterInputs<AppRouter>;
/** Every procedure's output, as the router declares it. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;

/**
 * The envelope the model reads: `status` (SUCCEEDED | FAILED_NO_EFFECT | UNKNOWN), `retry_safe`,
 * `effect`, `action_taken`, `message`, `idempotency_key`, `attempt`, `replayed`, and optionally
 * `result`, `resolution`, `error`, `retry_after_ms`, `sent_key`, `sent_args`. Snake case because
 * the model reads it as it is.
 */
export type Envelope = RouterOutputs["calls"]["execute"];
/** One of the three outcomes. */
export type Outcome = Envelope["status"];
/** Input of `calls.execute` on the wire. */
export type ExecuteWireInput = RouterInputs["calls"]["execute"];
/** The saga's report of `runs.abort`: per step what happened, and a summary the model can read. */
export type AbortReport = RouterOutputs["runs"]["abort"];
/** One declared step of a run's plan (`runs.plan`). */
export type PlanStep = RouterInputs["runs"]["plan"]["steps"][number];
/** The answer of `runs.plan`: the run and how many steps were declared. */
export type PlanAnswer = RouterOutputs["runs"]["plan"];
/** One catalog entry of `tools.list`, with the JSON Schema (draft 2020-12) of its arguments. */
export type ToolInfo = RouterOutputs["tools"]["list"][number];
/** The intent record of `calls.get` (secret argument values masked for every role but admin). */
export type IntentRecordView = RouterOutputs["calls"]["get"];
