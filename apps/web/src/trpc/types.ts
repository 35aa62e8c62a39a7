import type { AppRouter } from "@tristate/executor/router";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";

/** Inputs of the executor's procedures (types only: nothing of the executor is bundled). */
export type RouterInputs = inferRouterInputs<AppRouter>;
/** Outputs of the executor's procedures. */
export type RouterOutputs = inferRouterOutputs<AppRouter>;

export type IntentSummary = RouterOutputs["intents"]["list"]["items"][number];
export type IntentDetail = RouterOutputs["intents"]["get"];
export type IntentStatus = IntentSummary["status"];
export type Resolution = NonNullable<IntentSummary["resolution"]>;
export type TimelineEvent = IntentDetail["events"][number];
export type QueueItem = RouterOutputs["queue"]["list"]["items"][number];
export type OperatorAction = RouterInputs["queue"]["resolve"]["action"];
export type ToolStats = RouterOutputs["stats"]["overview"]["tools"][number];
export type AuditEntry = RouterOutputs["audit"]["list"]["entries"][number];
export type Role = RouterOutputs["auth"]["whoami"]["role"];
export type Session = RouterOutputs["auth"]["whoami"];
