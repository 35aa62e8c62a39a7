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

/** The tab's memory of the outage across page loads (sessionStorage: this tab only). */
const STORAGE_KEY = "tristate.outage.v1";

/**
 * How long after the banner last saw the executor down its memory still counts, ms: a page load
 * takes less; a tab that comes back later starts a new outage rather than continue an old one.
 */
const OUTAGE_MEMORY_MS = 20_000;

/**
 * Remembers, for this tab, that the outage that began at `sinceEpochMs` was still on at `nowEpochMs`,
 * so a page loaded next (a reload, a link followed without client-side navigation) keeps its start.
 */
export function rememberOutage(sinceEpochMs: number, nowEpochMs = Date.now()): void {
  try {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ sinceEpochMs, seenEpochMs: nowEpochMs }));
  } catch {
    // storage full or disabled: the banner then starts from what the server says
  }
}

/** Forgets the outage (the executor answered). */
export function forgetOutage(): void {
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // nothing remembered
  }
}

/**
 * The start (epoch ms) of the outage this tab saw last, if it saw it within {@link OUTAGE_MEMORY_MS}
 * of `nowEpochMs`; else null.
 */
export function recalledOutageSince(nowEpochMs = Date.now()): number | null {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    if (!raw) return null;
    const { sinceEpochMs, seenEpochMs } = JSON.parse(raw) as { sinceEpochMs?: unknown; seenEpochMs?: unknown };
    if (typeof sinceEpochMs !== "number" || typeof seenEpochMs !== "number") return null;
    return nowEpochMs - seenEpochMs <= OUTAGE_MEMORY_MS && sinceEpochMs <= nowEpochMs ? sinceEpochMs : null;
  } catch {
    return null;
  }
}

/** The earlier of two outage starts (null: unknown). */
export function earliest(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}
