"use client";

import { useQueryClient } from "@tanstack/react-query";
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from "react";
import { useOutageSince } from "./outage-state";

interface Live {
  paused: boolean;
  setPaused(paused: boolean): void;
}

const LiveContext = createContext<Live>({ paused: false, setPaused: () => undefined });

/** Holds whether live refresh is paused for the pages below (the header's Pause). */
export function LiveProvider({ children }: { children: ReactNode }) {
  const [paused, setPaused] = useState(false);
  const value = useMemo(() => ({ paused, setPaused }), [paused]);
  return <LiveContext.Provider value={value}>{children}</LiveContext.Provider>;
}

/**
 * A page's refetch interval under the header's Pause: `interval(ms)` is `ms` while live, `false`
 * while paused. Use as `refetchInterval: interval(30_000)`.
 */
export function useLiveInterval(): (ms: number) => number | false {
  const { paused } = useContext(LiveContext);
  return useCallback((ms: number) => (paused ? false : ms), [paused]);
}

/** "Updated n s ago" (the newest answer any query got) and Pause / Resume, for the header. */
export function LiveStatus() {
  const queryClient = useQueryClient();
  const { paused, setPaused } = useContext(LiveContext);
  const [lastEpochMs, setLastEpochMs] = useState<number | null>(null);
  const [now, setNow] = useState(() => Date.now());

  useEffect(() => {
    return queryClient.getQueryCache().subscribe((event) => {
      if (event.type === "updated" && event.action.type === "success") setLastEpochMs(Date.now());
    });
  }, [queryClient]);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, []);

  const outage = useOutageSince() !== null;
  const ago = lastEpochMs === null ? null : Math.max(0, Math.round((now - lastEpochMs) / 1000));
  return (
    <span className="live">
      <span data-testid="updated-ago">
        {outage ? "Offline: last data" : paused ? "Paused" : "Live"}
        {ago === null ? "" : ` · updated ${ago} s ago`}
      </span>
      <button
        type="button"
        onClick={() => {
          // Resuming refetches at once (not at the next interval).
          if (paused) void queryClient.refetchQueries({ type: "active" });
          setPaused(!paused);
        }}
        aria-pressed={paused}
      >
        {paused ? "Resume" : "Pause"}
      </button>
    </span>
  );
}
