import { dehydrate, hydrate, type QueryClient } from "@tanstack/react-query";

/** The sessionStorage entry holding the last answers (per tab; gone when the tab closes). */
const STORAGE_KEY = "tristate.lastData.v1";
/** Answers larger than this (JSON characters, all together) are not kept. */
const MAX_CHARS = 2_000_000;
/** At most one write per this many ms. */
const WRITE_EVERY_MS = 2_000;

/**
 * Puts the answers this tab saw last back into `queryClient` (after a reload while the executor is
 * unreachable, pages show them instead of nothing). Answers newer than the stored ones win.
 */
export function restoreLastData(queryClient: QueryClient): void {
  try {
    const raw = window.sessionStorage.getItem(STORAGE_KEY);
    if (raw) hydrate(queryClient, JSON.parse(raw));
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
      const state = dehydrate(queryClient, { shouldDehydrateQuery: (q) => q.state.status === "success" });
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
