"use client";

import { useQuery } from "@tanstack/react-query";
import { createColumnHelper } from "@tanstack/react-table";
import Link from "next/link";
import { useState } from "react";
import { type Columns, DataTable } from "~/components/data-table";
import { ListRangePicker } from "~/components/list-range-picker";
import { useLiveInterval } from "~/components/live-refresh";
import { EmptyState, ErrorState, Loading, NoResults } from "~/components/states";
import { TenantLink, useTenantFilter, withTenantColumn } from "~/components/tenant-filter";
import { formatDuration, formatTime } from "~/lib/format";
import { RUN_STATUSES, type RunStatus, type RunSummary, runStatusLabel, summariseRuns } from "~/lib/run-summary";
import { runPath } from "~/lib/search";
import { parseListWindow } from "~/lib/time-range";
import { useTRPC } from "~/trpc/react";

/** Records read per page of runs (the API's largest page). */
const RECORDS_PER_PAGE = 200;

const col = createColumnHelper<RunSummary>();
const columns: Columns<RunSummary> = [
  col.accessor("runId", {
    header: "Run",
    cell: (c) => (
      <TenantLink href={runPath(c.getValue())} className="mono small">
        {c.getValue()}
      </TenantLink>
    ),
  }),
  col.accessor("status", {
    header: "Status",
    cell: (c) => <span data-status={c.getValue()}>{runStatusLabel(c.getValue())}</span>,
    meta: { testId: "run-status" },
  }),
  col.accessor("startedAtEpochMs", {
    header: "Started",
    cell: (c) => <span className="nowrap">{formatTime(c.getValue())}</span>,
  }),
  col.accessor("durationMs", {
    header: "Duration",
    cell: (c) => formatDuration(c.getValue()),
    meta: { numeric: true },
  }),
  col.accessor("steps", { header: "Steps", meta: { numeric: true } }),
  col.accessor((r) => r.tools.join(", "), { id: "tools", header: "Tools" }),
  col.accessor("unknownCount", { header: "UNKNOWNs", meta: { numeric: true, testId: "run-unknowns" } }),
];

/**
 * The runs of the newest records (keyset-paged by `?cursor=`), with status, start, duration, tools
 * and UNKNOWN count; filters `status`, `tool`, `range` or `from`/`to` (epoch ms) in the URL. The filter form is
 * a plain GET form, so it works before hydration. A run whose steps straddle two pages shows the
 * steps of this page.
 */
export function RunsList({ params }: { params: Record<string, string> }) {
  const live = useLiveInterval();
  const trpc = useTRPC();
  const tenant = useTenantFilter();
  const status = RUN_STATUSES.includes(params.status as RunStatus) ? (params.status as RunStatus) : undefined;
  const [now] = useState(() => Date.now());
  const span = parseListWindow(params, now);
  const filters = { ...(params.tool ? { tool: params.tool } : {}), ...span };
  const page = useQuery({
    ...trpc.intents.list.queryOptions({
      filters,
      limit: RECORDS_PER_PAGE,
      ...(params.cursor ? { cursor: params.cursor } : {}),
      ...tenant.input,
    }),
    refetchInterval: live(30_000),
  });
  const runs = page.data ? summariseRuns(page.data.items) : [];
  const shown = status ? runs.filter((r) => r.status === status) : runs;
  const pageHref = (cursor: string | undefined) => {
    const query = new URLSearchParams(Object.entries(params).filter(([k]) => k !== "cursor"));
    if (cursor) query.set("cursor", cursor);
    const search = query.toString();
    return tenant.href(`/runs${search ? `?${search}` : ""}`);
  };

  return (
    <>
      <h2>Runs</h2>
      <ListRangePicker path="/runs" params={params} window={span} />
      <form method="get" action="/runs" className="toolbar" key={JSON.stringify(params)}>
        {tenant.tenant !== undefined ? <input type="hidden" name="tenant" value={tenant.tenant} /> : null}
        {params.range ? <input type="hidden" name="range" value={params.range} /> : null}
        {params.from ? <input type="hidden" name="from" value={params.from} /> : null}
        {params.to ? <input type="hidden" name="to" value={params.to} /> : null}
        <label className="field">
          <span>Status</span>
          <select name="status" defaultValue={status ?? ""}>
            <option value="">any</option>
            {RUN_STATUSES.map((s) => (
              <option key={s} value={s}>
                {runStatusLabel(s)}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>With a step of tool</span>
          <input name="tool" defaultValue={params.tool ?? ""} />
        </label>
        <button type="submit">Filter</button>
      </form>
      {page.isPending ? <Loading what="runs" /> : null}
      {page.error && !page.data ? <ErrorState error={page.error} title="Could not load the runs" /> : null}
      {page.data && runs.length === 0 && !params.cursor && !params.tool ? (
        <EmptyState>No agent has made a side-effecting call yet.</EmptyState>
      ) : null}
      {page.data && shown.length === 0 && (runs.length > 0 || params.cursor || params.tool) ? (
        <NoResults>No run on this page matches these filters.</NoResults>
      ) : null}
      {shown.length ? (
        <DataTable
          label="Runs"
          data={shown}
          columns={withTenantColumn(columns, tenant.showTenant)}
          rowProps={(row) => ({ "data-testid": "run-row", "data-run": row.original.runId })}
        />
      ) : null}
      {params.cursor || page.data?.nextCursor ? (
        <nav aria-label="Pages of runs" className="toolbar">
          {params.cursor ? <Link href={pageHref(undefined)}>Newest runs</Link> : null}
          {page.data?.nextCursor ? <Link href={pageHref(page.data.nextCursor)}>Older runs</Link> : null}
        </nav>
      ) : null}
    </>
  );
}
