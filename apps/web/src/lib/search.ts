/** What the search box was given: nothing, a 32-hex id (an idempotency key or a trace id), or a run id. */
export type SearchTarget =
  | { kind: "empty" }
  | { kind: "hex32"; value: string }
  | { kind: "run"; runId: string }
  | { kind: "invalid"; reason: string };

/** The executor's rule for run ids: 1–200 printable ASCII characters without spaces. */
const RUN_ID = /^[\x21-\x7e]{1,200}$/;

const HEX32 = /^[0-9a-f]{32}$/i;

/**
 * Classifies what was typed in the search box. A 32-hex value is an idempotency key or a trace id
 * (the caller asks the API which); anything else is a run id.
 */
export function classifySearch(raw: string): SearchTarget {
  const value = raw.trim();
  if (!value) return { kind: "empty" };
  if (HEX32.test(value)) return { kind: "hex32", value: value.toLowerCase() };
  if (!RUN_ID.test(value)) {
    return {
      kind: "invalid",
      reason: "Not a key, trace id or run id: run ids are 1–200 printable ASCII characters without spaces.",
    };
  }
  return { kind: "run", runId: value };
}

/** The page for a run id. */
export function runPath(runId: string): string {
  return `/runs/${encodeURIComponent(runId)}`;
}

/** The page for an idempotency key. */
export function intentPath(key: string): string {
  return `/intents/${encodeURIComponent(key)}`;
}
