/**
 * Compile-time contract between the published API types (`src/api-types.ts`) and the executor's
 * router (a type-only import; `tsc -p tsconfig.json` checks it, so `npm test`'s typecheck fails on
 * drift). Outputs: what the router can return must fit the published type, and the published type
 * must not promise more than the router returns (both directions). Inputs: what the published type
 * allows must be accepted by the router.
 */
import type { AppRouter } from "@tristate/executor/router";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type {
  AbortReport,
  Envelope,
  ExecuteWireInput,
  IntentRecordView,
  PlanAnswer,
  PlanStep,
  ToolInfo,
} from "../src/api-types.ts";

type RouterInputs = inferRouterInputs<AppRouter>;
type RouterOutputs = inferRouterOutputs<AppRouter>;

/** True when A and B are assignable both ways. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** True when A is assignable to B. */
type Fits<A, B> = [A] extends [B] ? true : false;
/** Compiles only for `true`. */
type Holds<T extends true> = T;

export type Contract = [
  Holds<Same<Envelope, RouterOutputs["calls"]["execute"]>>,
  Holds<Same<AbortReport, RouterOutputs["runs"]["abort"]>>,
  Holds<Same<PlanAnswer, RouterOutputs["runs"]["plan"]>>,
  Holds<Same<ToolInfo, RouterOutputs["tools"]["list"][number]>>,
  Holds<Same<IntentRecordView, RouterOutputs["calls"]["get"]>>,
  Holds<Fits<ExecuteWireInput, RouterInputs["calls"]["execute"]>>,
  Holds<Fits<PlanStep, RouterInputs["runs"]["plan"]["steps"][number]>>,
  Holds<Fits<RouterInputs["calls"]["execute"], ExecuteWireInput>>,
];
