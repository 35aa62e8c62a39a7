"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useRef, useState } from "react";
import { Time } from "~/components/time-zone-toggle";
import { formatDuration } from "~/lib/format";
import { isUnreachable } from "~/trpc/react";
import { setOutageSince } from "./outage-state";

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
  const unconfirmed = useRef(sessionUnconfirmed);

  const check = useCallback(async () => {
    if (checking.current) return;
    checking.current = true;
    try {
      const res = await fetch("/api/health", { cache: "no-store" });
      const health = (await res.json()) as Health;
      if (health.up) {
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
      } else setDownSince((was) => was ?? health.downSinceEpochMs ?? Date.now());
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
    const timer = setInterval(() => {
      setNow(Date.now());
      void check();
    }, OUTAGE_RETRY_MS);
    return () => clearInterval(timer);
  }, [downSince, check]);

  useEffect(() => {
    setOutageSince(downSince);
  }, [downSince]);

  if (downSince === null) return null;
  return (
    <div role="alert" className="outage" data-testid="outage-banner">
      <strong>
        Executor unreachable since <Time epochMs={downSince} />
      </strong>{" "}
      ({formatDuration(Math.max(0, now - downSince))}), retrying every {OUTAGE_RETRY_MS / 1000} s. The page shows the
      last data it had; actions wait until the executor answers.
      {sessionUnconfirmed ? " Your session will be checked again then." : ""}
    </div>
  );
}
