"use client";

import { useQuery } from "@tanstack/react-query";
import { EmptyState, ErrorState, Loading } from "~/components/states";
import { TenantLink, useTenantFilter } from "~/components/tenant-filter";
import { formatTime } from "~/lib/format";
import { runPath } from "~/lib/search";
import { useTRPC } from "~/trpc/react";

/** Runs seen in the newest records. */
export function RecentRuns() {
  const trpc = useTRPC();
  const tenant = useTenantFilter();
  const recent = useQuery({
    ...trpc.intents.list.queryOptions({ limit: 200, ...tenant.input }),
    refetchInterval: 30_000,
  });
  if (recent.isPending) return <Loading what="recent runs" />;
  if (recent.error && !recent.data) return <ErrorState error={recent.error} title="Could not load recent runs" />;
  const runs = new Map<string, { steps: number; latest: number }>();
  for (const item of recent.data.items) {
    const run = runs.get(item.runId) ?? { steps: 0, latest: 0 };
    run.steps += 1;
    run.latest = Math.max(run.latest, item.createdAtEpochMs);
    runs.set(item.runId, run);
  }
  if (!runs.size) return <EmptyState>No agent has made a side-effecting call yet.</EmptyState>;
  return (
    <>
      <h2>Recent runs</h2>
      <ul>
        {[...runs].map(([runId, run]) => (
          <li key={runId}>
            <TenantLink href={runPath(runId)}>{runId}</TenantLink>{" "}
            <span className="muted small">
              {run.steps} recent step{run.steps === 1 ? "" : "s"}, latest {formatTime(run.latest)}
            </span>
          </li>
        ))}
      </ul>
    </>
  );
}
