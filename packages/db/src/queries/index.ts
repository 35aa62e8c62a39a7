/** Read-side queries of the operators' dashboard (one per file), over Prisma on PostgreSQL. */

export { type ArchiveOptions, type ArchiveResult, archiveIntents } from "../rollups/archive-intents.ts";
export {
  HIST_RELATIVE_ERROR,
  ROLLUP_LEVELS_MS,
  SEAL_MARGIN_MS,
} from "../rollups/buckets.ts";
export { type ReadModelLoop, type ReadModelLoopOptions, startReadModelLoop } from "../rollups/read-model-loop.ts";
export { tenantsWithRecords } from "../rollups/record-sources.ts";
export {
  type RefreshRollupsOptions,
  type RefreshRollupsResult,
  refreshIntentRollups,
} from "../rollups/refresh-rollups.ts";
export { getIntent, type IntentDetail, intentKeySchema, type TimelineEvent } from "./get-intent.ts";
export { getRun, MAX_RUN_RECORDS, type RunDetail, type RunPlanView } from "./get-run.ts";
export type {
  ArgsRedactor,
  IntentDetailRecord,
  IntentSummary,
  TenantScope,
} from "./intent-view.ts";
export {
  DEFAULT_LIST_LIMIT,
  type IntentFilters,
  type IntentPage,
  intentFiltersSchema,
  listIntents,
  listIntentsInput,
  MAX_LIST_LIMIT,
} from "./list-intents.ts";
export {
  DEFAULT_RUNS_LIMIT,
  DEFAULT_RUNS_WINDOW_MS,
  listRuns,
  listRunsInput,
  MAX_RUNS_LIMIT,
  MAX_RUNS_WINDOW_MS,
  RUN_ABORT_ACTION,
  RUN_AUDIT_KEY_PREFIX,
  RUN_STATUSES,
  type RunPage,
  type RunStatus,
  type RunSummary,
} from "./list-runs.ts";
export { listStale, listStaleInput, type StaleIntent, type StaleList } from "./list-stale.ts";
export { type NeedsHumanSummary, needsHumanSummary } from "./needs-human-summary.ts";
export {
  CursorError,
  checkWindow,
  epochMsSchema,
  filterTextSchema,
  isCursorError,
  isQueryInputError,
  QueryInputError,
  resolveWindow,
  type WindowInput,
} from "./query-input.ts";
export type { RunAbortView } from "./run-abort-view.ts";
export {
  DEFAULT_IDENTITY_LIMIT,
  type IdentityMatch,
  type IdentityPage,
  identitySearchForms,
  MAX_IDENTITY_LIMIT,
  searchByIdentity,
  searchByIdentityInput,
} from "./search-identity.ts";
export {
  DEFAULT_SPARKLINE_BUCKETS,
  type LatencyStats,
  type PeriodShare,
  type ReliabilityStats,
  type ResolutionBreakdown,
  type SparklinePoint,
  type StatsOverview,
  statsOverview,
  statsOverviewInput,
  TIMEOUT_NEAR_LATENCY_RATIO,
  type ToolStats,
} from "./stats-overview.ts";
export { toolFilterPattern, toolMatchesFilter, toolsMatching } from "./tool-match.ts";
