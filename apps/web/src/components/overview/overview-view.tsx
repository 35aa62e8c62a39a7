"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useMemo, useState } from "react";
import { AttentionStrip } from "~/components/attention";
import { DataTable } from "~/components/data-table";
import { useLiveInterval } from "~/components/live-refresh";
import { ParamProblems } from "~/components/param-problems";
import { EmptyState, ErrorState, Loading } from "~/components/states";
import { useTenantFilter } from "~/components/tenant-filter";
import { Time } from "~/components/time-zone-toggle";
import { countOf, formatShare, formatShareChange } from "~/lib/format";
import { MIX_KEYS, mixCategory } from "~/lib/resolution-mix";
import { parseSortParam, withSortParam } from "~/lib/sort-param";
import { bucketsFor } from "~/lib/time-range";
import { COMMON_PARAMS, checkParams, type ParamRule, withoutProblems } from "~/lib/url-params";
import { useTRPC } from "~/trpc/react";
import { RangePicker } from "./range-picker";
import { leafColumnIds, toolColumns } from "./tool-columns";
import { ToolSeries } from "./tool-series";
import { useOverviewRange } from "./use-overview-range";

/** Aggregates refresh every 30 s (paused in background tabs). */
const AGGREGATES_REFETCH_MS = 30_000;

/** The URL parameters of the overview: the window, the tenant and `all=1` (tools with no calls too). */
const OVERVIEW_PARAMS: Record<string, ParamRule> = {
  tenant: COMMON_PARAMS.tenant,
  range: COMMON_PARAMS.range,
  from: COMMON_PARAMS.from,
  to: COMMON_PARAMS.to,
  all: { kind: "oneOf", values: ["1"] },
  sort: { kind: "any" },
};

/** `/overview` with the current parameters and `all=1` (tools without calls shown) or without it. */
function overviewHref(params: Record<string, string>, all: boolean): string {
  // (the table's sort, `sort`, is kept along with the window)
  const query = new URLSearchParams(Object.entries(params).filter(([k]) => k !== "all" && k !== "tenant"));
  if (all) query.set("all", "1");
  const search = query.toString();
  return `/overview${search ? `?${search}` : ""}`;
}

/** Tools without calls in the window are hidden unless asked for (`?all=1`). */
function IdleToggle({ showIdle, idle, href }: { showIdle: boolean; idle: number; href: (all: boolean) => string }) {
  if (!idle) return null;
  return (
    <p className="small">
      {showIdle ? (
        <Link href={href(false)}>Hide the {countOf(idle, "tool")} without calls</Link>
      ) : (
        <Link href={href(true)}>Show the {countOf(idle, "tool")} without calls in this window</Link>
      )}
    </p>
  );
}

/** The overview: reliability per tool in the window chosen in the URL. */
export function OverviewView({
  params,
  initialNowEpochMs,
}: {
  params: Record<string, string>;
  initialNowEpochMs: number;
}) {
  const live = useLiveInterval();
  const tickMs = live(AGGREGATES_REFETCH_MS);
  const trpc = useTRPC();
  const router = useRouter();
  const tenant = useTenantFilter();
  const [now, setNow] = useState(initialNowEpochMs);
  useEffect(() => {
    if (tickMs === false) return; // paused: the window stays where it is
    const timer = setInterval(() => setNow(Date.now()), tickMs);
    return () => clearInterval(timer);
  }, [tickMs]);
  const problems = checkParams(params, OVERVIEW_PARAMS);
  const { range, ready: rangeReady } = useOverviewRange(params, now);
  const { fromEpochMs, toEpochMs } = range;
  const span = useMemo(() => ({ fromEpochMs, toEpochMs }), [fromEpochMs, toEpochMs]);
  const showIdle = params.all === "1";
  const stats = useQuery({
    ...trpc.stats.overview.queryOptions({ ...span, buckets: bucketsFor(range), ...tenant.input }),
    enabled: rangeReady,
    refetchInterval: live(AGGREGATES_REFETCH_MS),
    placeholderData: (previous) => previous,
  });

  const columns = useMemo(() => toolColumns(span, (href) => router.push(tenant.href(href))), [span, router, tenant]);
  const { tenant: _tenant, ...untenanted } = params; // tenant.href adds it back
  const compensationsHref = tenant.href(
    `/overview?${withSortParam(untenanted, [{ id: "compensationsFailed", desc: true }])}#reliability`,
  );

  return (
    <>
      <h1>Overview</h1>
      <ParamProblems problems={problems} path="/overview" kept={withoutProblems(params, problems)} />
      <RangePicker key={`${range.preset}-${params.from ?? ""}-${params.to ?? ""}`} range={range} />
      <p className="muted small" suppressHydrationWarning>
        Calls created from <Time epochMs={range.fromEpochMs} /> to <Time epochMs={range.toEpochMs} />. Refreshes every
        30 s.
        {tenant.selectable ? (
          <span data-testid="tenant-scope"> {tenant.tenant ? `Tenant ${tenant.tenant} only.` : "All tenants."}</span>
        ) : null}
      </p>
      <AttentionStrip
        compensationsFailed={stats.data?.totals.compensationsFailed}
        compensationsHref={compensationsHref}
      />
      {stats.error ? <ErrorState error={stats.error} title="Could not load the overview" /> : null}
      {stats.data ? (
        stats.data.tools.length ? (
          <>
            <IdleToggle
              showIdle={showIdle}
              idle={stats.data.tools.filter((t) => t.calls === 0).length}
              href={(all) => tenant.href(overviewHref(params, all))}
            />
            <div className="table-fit" id="reliability">
              <DataTable
                label="Reliability per tool"
                data={showIdle ? stats.data.tools : stats.data.tools.filter((t) => t.calls > 0)}
                columns={columns}
                sorting={parseSortParam(params.sort, leafColumnIds(columns))}
                onSortingChange={(sorting) => {
                  const search = withSortParam(untenanted, sorting);
                  router.replace(tenant.href(`/overview${search ? `?${search}` : ""}`), { scroll: false });
                }}
              />
            </div>
            <p className="bar-legend">
              {MIX_KEYS.map((key) => mixCategory(key)).map((c) => (
                <span key={c.label} title={c.meaning}>
                  <span className="swatch" style={{ background: c.color }} aria-hidden="true" />
                  {c.label}
                </span>
              ))}
            </p>
            <p className="small">
              All tools: {countOf(stats.data.totals.calls, "call")},{" "}
              {formatShare(stats.data.totals.calls ? stats.data.totals.unknownShare : 0)} UNKNOWN (
              {formatShareChange(stats.data.totals.unknownShareChange)} vs previous period).
            </p>
            <ToolSeries tools={stats.data.tools} spanMs={range.toEpochMs - range.fromEpochMs} />
          </>
        ) : (
          <EmptyState>The catalog has no side-effecting tools and no calls were recorded.</EmptyState>
        )
      ) : stats.isPending ? (
        <Loading what="the overview" />
      ) : null}
    </>
  );
}
