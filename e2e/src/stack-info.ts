/** What the stack process (`src/stack.ts`) hands the tests, through the `E2E_STACK` variable. */
export interface StackInfo {
  /** The executor service, e.g. `http://127.0.0.1:40123` (API under `/trpc/`). */
  executorUrl: string;
  /** The web app (`next start`). */
  webUrl: string;
  /** The stack's control server: `POST /fault` queues faults on the fake remote; `POST /executor` cuts the web app off the executor. */
  controlUrl: string;
  /** The OTLP/HTTP sink the executor exports spans to. */
  traceSinkUrl: string;
  /** One API key per role (two operators). */
  keys: { agent: string; viewer: string; operator: string; operator2: string; admin: string };
  /** The keys' names, as the dashboard shows them. */
  names: typeof KEY_NAMES;
  tools: typeof TOOLS;
  traceUrlTemplate: string;
}

/** Names of the keys the stack creates (the audit log and the conflict message show them). */
export const KEY_NAMES = {
  agent: "agent-e2e",
  viewer: "vera",
  operator: "ana",
  operator2: "bo",
  admin: "ada",
} as const;

/** The catalog's tools: one set per test area, so per-tool counts never mix between tests. */
export const TOOLS = {
  /** Keyed with probes (UNKNOWN → found / absent → resent). */
  overviewKeyed: "overview_refund",
  /** Unsafe without probes (UNKNOWN → the human queue). */
  overviewManual: "overview_manual_refund",
  queue: "queue_refund",
  conflict: "conflict_refund",
  viewer: "viewer_refund",
  trace: "traced_refund",
  pages: "pages_refund",
  pagesManual: "pages_manual_refund",
  /** Unsafe without probes: records of two tenants in the human queue (tenants.spec.ts). */
  tenants: "tenants_refund",
  /** Unsafe without probes: the record page's queue actions (actions.spec.ts). */
  record: "record_refund",
  /** Unsafe without probes: bulk resolution in the queue (actions.spec.ts). */
  bulk: "bulk_refund",
  /** Keyed with probes and a compensation (`runsReverse`): the run page's abort (actions.spec.ts). */
  runs: "runs_refund",
  /** The compensation of `runs`. */
  runsReverse: "runs_reverse",
  /** Unsafe without probes: the run page's step states and the record timeline (run-page.spec.ts). */
  runPage: "run_page_refund",
  /**
   * Keyed; its key probe reads a failed item as refused: a declined charge whose answer was lost ends
   * FAILED_NO_EFFECT without a resolution — the overview's "other" (attention.spec.ts).
   */
  declined: "declined_refund",
  /** Keyed, a confirmation policy over 1,000.00 and a secret `reason`: the confirm page (confirm.spec.ts). */
  confirm: "confirmed_payout",
} as const;

/** The web app's trace link template (never opened: the tests read the link). */
export const TRACE_URL_TEMPLATE =
  "http://jaeger.e2e.test:16686/trace/{traceId}?start={startMicros}&end={endMicros}&startMs={startMs}&endMs={endMs}";
