"use client";

import { useSyncExternalStore } from "react";

/**
 * The executor outage as the banner knows it (its start, epoch ms, or null), shared with the rest of
 * the header (the live status, the tenant picker) so that during an outage they read as part of it.
 */
let downSince: number | null = null;
const listeners = new Set<() => void>();

/** Set by the outage banner whenever its view of the outage changes. */
export function setOutageSince(value: number | null): void {
  if (value === downSince) return;
  downSince = value;
  for (const listener of listeners) listener();
}

/** When the current executor outage began (epoch ms), or null while the executor answers. */
export function useOutageSince(): number | null {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => downSince,
    () => null,
  );
}
