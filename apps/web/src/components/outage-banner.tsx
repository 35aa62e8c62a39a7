"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useRef, useState } from "react";
import { Time } from "~/components/time-zone-toggle";
import { formatDuration } from "~/lib/format";
import { isUnreachable } from "~/trpc/react";
import { earliest, forgetOutage, recalledOutageSince, rememberOutage, setOutageSince } from "./outage-state";

/** While the executor is down, its health is asked this often, ms. */
export const OUTAGE_RETRY_MS = 3_000;

interface Health {
  up: boolean;
  downSinceEpochMs: number | null;
}

/**
 * The banner shown on every signed-in page while the executor cannot be reached or does not answer
 * in time: since when, that it is retrying, and that the page shows the last data it had. It asks
 * `/api/health` when a read fails for want of the executor and then every {@link OUTAGE_RETRY_MS};
 * when the executor answers again it refetches every query (and, when the page was rendered without
 * the executor confirming the session, reloads the page's server part) and disappears.
 *
 * It sits in the signed-in layout, so client-side navigation keeps it (and its count) as it is; the
 * outage's start is also kept in this tab's sessionStorage, so a page load during the same outage
 * continues it — "since" stays the first failure this tab or the server saw, and the count runs on.
 */
export function OutageBanner({
  initialDownSinceEpochMs,
  sessionUnconfirmed,
}: {
  /** The outage's start as the server saw it while rendering, or null. */
  initialDownSinceEpochMs: number | null;
  /** The server could not confirm the session (the executor was unreachable). */
  sessionUnconfirmed: boolean;
}) {
  const queryClient = useQueryClient();
  const router = useRouter();
  const [downSince, setDownSince] = useState<number | null>(
    initialDownSinceEpochMs ?? (sessionUnconfirmed ? Date.now() : null),
  );
  const [now, setNow] = useState(() => Date.now());
  const checking = useRef(false);
  // A page load during an outage this tab already saw: continue it (its start, its count).
  useEffect(() => {
    const recalled = recalledOutageSince();
    if (recalled !== null && downSince !== null) setDownSince((was) => earliest(was, recalled));
  }, [downSince]);
  const unconfirmed = useRef(sessionUnconfirmed);

  const check = useCallback(async () => {
    if (checking.current) return;
    checking.current = true;
    try {
      const res = await fetch("/api/health", { cache: "no-store" });
      const health = (await res.json()) as Health;
      if (health.up) {
        forgetOutage();
        setDownSince((was) => {
          if (was !== null) {
            void queryClient.invalidateQueries();
            if (unconfirmed.current) {
              unconfirmed.current = false;
              router.refresh();
            }
          }
          return null;
        });
      } else {
        setDownSince((was) => earliest(was ?? health.downSinceEpochMs ?? Date.now(), recalledOutageSince()));
      }
    } catch {
      // the dashboard server itself is unreachable: leave the banner as it is
    } finally {
      checking.current = false;
    }
  }, [queryClient, router]);

  useEffect(() => {
    return queryClient.getQueryCache().subscribe((event) => {
      if (event.type !== "updated") return;
      if (event.action.type === "error" && isUnreachable(event.action.error)) void check();
    });
  }, [queryClient, check]);

  useEffect(() => {
    if (downSince === null) return;
    void check();
    const timer = setInterval(() => void check(), OUTAGE_RETRY_MS);
    return () => clearInterval(timer);
  }, [downSince, check]);

  // The count runs every second while the banner shows (from the moment it appears, not a tick later).
  useEffect(() => {
    if (downSince === null) return;
    setNow(Date.now());
    rememberOutage(downSince);
    const timer = setInterval(() => {
      setNow(Date.now());
      rememberOutage(downSince);
    }, 1_000);
    return () => clearInterval(timer);
  }, [downSince]);

  useEffect(() => {
    setOutageSince(downSince);
  }, [downSince]);

  if (downSince === null) return null;
  return (
    <div role="alert" className="outage" data-testid="outage-banner" data-since={downSince}>
      <strong>
        Executor unreachable since <Time epochMs={downSince} />
      </strong>{" "}
      (
      <span data-testid="outage-duration" suppressHydrationWarning>
        {formatDuration(Math.max(0, now - downSince))}
      </span>
      ), retrying every {OUTAGE_RETRY_MS / 1000} s. The page shows the last data it had; actions wait until the executor
      answers.
      {sessionUnconfirmed ? " Your session will be checked again then." : ""}
    </div>
  );
}
