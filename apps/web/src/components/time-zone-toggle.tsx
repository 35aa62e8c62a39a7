"use client";

import { createContext, type ReactNode, useContext, useEffect, useState } from "react";
import { browserZoneIsUtc, type DisplayTimeZone, displayZoneName, formatTime, setDisplayTimeZone } from "~/lib/format";

const STORAGE_KEY = "tristate.timeZone";

/** The zone of every time on the page; UTC until mounted (see {@link TimeZoneScope}). */
const DisplayZoneContext = createContext<DisplayTimeZone>("UTC");

/** The zone times are shown in on this page; components that write times read it, so they follow the toggle. */
export function useDisplayZone(): DisplayTimeZone {
  return useContext(DisplayZoneContext);
}

/** One time, in the page's zone and labelled with it (e.g. `30 Nov 2026, 21:30:05 UTC`), as a `<time>`. */
export function Time({ epochMs, className }: { epochMs: number | null; className?: string }) {
  const zone = useDisplayZone();
  if (epochMs === null) return <span className={className}>–</span>;
  return (
    <time className={className} dateTime={new Date(epochMs).toISOString()}>
      {formatTime(epochMs, zone)}
    </time>
  );
}

/**
 * Shows every time in the browser's zone or in UTC (kept in localStorage), one zone per page. The
 * server's HTML and the first render are in UTC (the server cannot know the browser's zone); once
 * mounted, the chosen zone is set and every time on the page follows it (through {@link Time},
 * {@link useDisplayZone}). The toggle says which zone is shown and what clicking it does.
 */
export function TimeZoneScope({ children, toggle }: { children: ReactNode; toggle: (t: ReactNode) => ReactNode }) {
  // null: not mounted yet (times in UTC, as the server wrote them).
  const [zone, setZone] = useState<DisplayTimeZone | null>(null);
  useEffect(() => {
    const saved: DisplayTimeZone = window.localStorage.getItem(STORAGE_KEY) === "UTC" ? "UTC" : "local";
    setDisplayTimeZone(saved);
    setZone(saved);
  }, []);
  function choose(next: DisplayTimeZone) {
    setDisplayTimeZone(next);
    window.localStorage.setItem(STORAGE_KEY, next);
    setZone(next);
  }
  const shown = zone ?? "UTC";
  const other: DisplayTimeZone = shown === "UTC" ? "local" : "UTC";
  // A browser whose own zone is UTC has no other zone to offer: say so, offer nothing.
  const localIsUtc = zone !== null && browserZoneIsUtc();
  const control = localIsUtc ? (
    <span className="zone-toggle">
      <span>
        Times in <strong data-testid="time-zone">UTC</strong>, this browser's zone.
      </span>
    </span>
  ) : (
    <span className="zone-toggle">
      <span>
        Times in <strong data-testid="time-zone">{displayZoneName(shown)}</strong>.
      </span>{" "}
      <button type="button" onClick={() => choose(other)} disabled={zone === null}>
        {other === "UTC"
          ? "Show times in UTC"
          : `Show times in local time${zone === null ? "" : ` (${displayZoneName("local")})`}`}
      </button>
    </span>
  );
  return (
    <DisplayZoneContext.Provider value={shown}>
      {toggle(control)}
      {children}
    </DisplayZoneContext.Provider>
  );
}
