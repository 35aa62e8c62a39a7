"use client";

import { Fragment, type ReactNode, useEffect, useState } from "react";
import { type DisplayTimeZone, setDisplayTimeZone } from "~/lib/format";

const STORAGE_KEY = "tristate.timeZone";

/**
 * Shows every time in the browser's zone or in UTC (kept in localStorage). Switching re-renders the
 * page below (`children`) so every time is written again in the chosen zone.
 */
export function TimeZoneScope({ children, toggle }: { children: ReactNode; toggle: (t: ReactNode) => ReactNode }) {
  const [zone, setZone] = useState<DisplayTimeZone>("local");
  useEffect(() => {
    const saved = window.localStorage.getItem(STORAGE_KEY);
    if (saved === "UTC") {
      setDisplayTimeZone("UTC");
      setZone("UTC");
    }
  }, []);
  function choose(next: DisplayTimeZone) {
    setDisplayTimeZone(next);
    window.localStorage.setItem(STORAGE_KEY, next);
    setZone(next);
  }
  const button = (
    <button type="button" aria-pressed={zone === "UTC"} onClick={() => choose(zone === "UTC" ? "local" : "UTC")}>
      {zone === "UTC" ? "Times in UTC" : "Times in local zone"}
    </button>
  );
  return (
    <>
      {toggle(button)}
      <Fragment key={zone}>{children}</Fragment>
    </>
  );
}
