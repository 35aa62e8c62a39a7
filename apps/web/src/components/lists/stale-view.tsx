"use client";

import { useQuery } from "@tanstack/react-query";
import { createColumnHelper } from "@tanstack/react-table";
import { type Columns, DataTable } from "~/components/data-table";
import { useLiveInterval } from "~/components/live-refresh";
import { EmptyState, ErrorState, Loading } from "~/components/states";
import { useTenantFilter, withTenantColumn } from "~/components/tenant-filter";
import { Time } from "~/components/time-zone-toggle";
import { formatDuration } from "~/lib/format";
import { useTRPC } from "~/trpc/react";
import type { RouterOutputs } from "~/trpc/types";
import { intentColumns } from "./intent-columns";

type StaleItem = RouterOutputs["stale"]["list"]["items"][number];
const col = createColumnHelper<StaleItem>();
const columns: Columns<StaleItem> = [
  ...(intentColumns as Columns<StaleItem>).filter((c) => c.header !== "Resolution"),
  col.accessor("leaseUntilEpochMs", { header: "Deadline", cell: (c) => <Time epochMs={c.getValue()} /> }),
  col.accessor("agePastDeadlineMs", {
    header: "Past deadline",
    meta: { numeric: true },
    cell: (c) => formatDuration(c.getValue()),
  }),
];

/** PENDING records past their deadline (the sweepers should pick them up), oldest deadline first. */
export function StaleView() {
  const live = useLiveInterval();
  const trpc = useTRPC();
  const tenant = useTenantFilter();
  const stale = useQuery({
    ...trpc.stale.list.queryOptions({ limit: 500, ...tenant.input }),
    refetchInterval: live(30_000),
  });
  return (
    <>
      <h1>Stale PENDING</h1>
      <p className="muted small">
        PENDING records past their deadline. The sweepers reconcile them; a growing list means they cannot.
      </p>
      {stale.error ? <ErrorState error={stale.error} title="Could not load stale records" /> : null}
      {stale.isPending ? <Loading what="stale records" /> : null}
      {stale.data ? (
        stale.data.items.length ? (
          <>
            <p>
              {stale.data.total} stale PENDING record{stale.data.total === 1 ? "" : "s"}
              {stale.data.total > stale.data.items.length ? ` (showing the oldest ${stale.data.items.length})` : ""}.
            </p>
            <DataTable
              label="Stale PENDING"
              data={stale.data.items}
              columns={withTenantColumn(columns, tenant.showTenant)}
            />
          </>
        ) : (
          <EmptyState>No PENDING record is past its deadline.</EmptyState>
        )
      ) : null}
    </>
  );
}
