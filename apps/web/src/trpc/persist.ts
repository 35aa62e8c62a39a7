import { type DehydratedState, dehydrate, hydrate, type QueryClient } from "@tanstack/react-query";

/** The sessionStorage entry holding the last answers (per tab; gone when the tab closes). */
const STORAGE_KEY = "tristate.lastData.v1";
/** Answers larger than this (JSON characters, all together) are not kept. */
const MAX_CHARS = 2_000_000;
/** At most one write per this many ms. */
const WRITE_EVERY_MS = 2_000;
/**
 * Procedures whose answers are never written to storage: `notifications.*` lists channels' URLs, and a
 * Slack incoming-webhook URL is a credential (issue 23 §3) — it stays in memory only.
 */
const NOT_KEPT = ["notifications"];

/**
 * Whether an answer may be kept in sessionStorage, by its tRPC query key (`[["notifications",
 * "channels", "list"], { input, type }]`): not a `notifications.*` answer.
 */
export function keepable(queryKey: readonly unknown[]): boolean {
  const path = queryKey[0];
  const first = Array.isArray(path) ? path[0] : path;
  return !(typeof first === "string" && NOT_KEPT.includes(first));
}

/**
 * Puts the answers this tab saw last back into `queryClient` (after a reload while the executor is
 * unreachable, pages show them instead of nothing). Answers newer than the stored ones win.
 */
export function restoreLastData(queryClient: QueryClient): void {
  try {
    const raw = window.sessionStorage.getItem(STORAGE_KEY);
    if (!raw) return;
    const state = JSON.parse(raw) as DehydratedState;
    // A tab that stored one before this rule: its notifications answers are dropped, not restored.
    hydrate(queryClient, { ...state, queries: state.queries.filter((q) => keepable(q.queryKey)) });
  } catch {
    window.sessionStorage.removeItem(STORAGE_KEY);
  }
}

/**
 * Keeps the successful answers of `queryClient` in sessionStorage (throttled); returns the
 * unsubscribe function. Storage errors (full, disabled) are ignored: this is a convenience.
 */
export function keepLastData(queryClient: QueryClient): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const write = () => {
    timer = null;
    try {
      const state = dehydrate(queryClient, {
        shouldDehydrateQuery: (q) => q.state.status === "success" && keepable(q.queryKey),
      });
      const json = JSON.stringify(state);
      if (json.length <= MAX_CHARS) window.sessionStorage.setItem(STORAGE_KEY, json);
    } catch {
      // storage full or disabled
    }
  };
  const unsubscribe = queryClient.getQueryCache().subscribe((event) => {
    if (event.type === "updated" && event.action.type === "success" && timer === null) {
      timer = setTimeout(write, WRITE_EVERY_MS);
    }
  });
  return () => {
    unsubscribe();
    if (timer !== null) clearTimeout(timer);
  };
}
