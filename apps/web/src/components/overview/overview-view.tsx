"use client";

import { useQuery } from "@tanstack/react-query";
import { createColumnHelper } from "@tanstack/react-table";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useMemo, useState } from "react";
import { type MixSegment, ResolutionBar } from "~/components/charts";
import { type Columns, DataTable } from "~/components/data-table";
import { useLiveInterval } from "~/components/live-refresh";
import { ParamProblems } from "~/components/param-problems";
import { EmptyState, ErrorState, Loading } from "~/components/states";
import { TenantLink, useTenantFilter } from "~/components/tenant-filter";
import { Time } from "~/components/time-zone-toggle";
import { countOf, formatDuration, formatShare, formatShareChange } from "~/lib/format";
import { intentListHref } from "~/lib/intent-filters";
import { parseSortParam, withSortParam } from "~/lib/sort-param";
import { parseTimeRange } from "~/lib/time-range";
import { COMMON_PARAMS, checkParams, type ParamRule, withoutProblems } from "~/lib/url-params";
import { useTRPC } from "~/trpc/react";
import type { ToolStats } from "~/trpc/types";
import { RangePicker } from "./range-picker";
import { ToolSeries } from "./tool-series";

/** Aggregates refresh every 30 s (paused in background tabs). */
const AGGREGATES_REFETCH_MS = 30_000;

function humanCount(t: ToolStats): number {
  const r = t.resolutions;
  return r.human_confirmed_effect + r.human_confirmed_no_effect + r.human_resent;
}

function segmentsOf(t: ToolStats, window: { fromEpochMs: number; toEpochMs: number }): MixSegment[] {
  const base = { tool: t.tool, ...window };
  return [
    {
      key: "found",
      label: "found",
      count: t.resolutions.found,
      color: "var(--seg-found)",
      href: intentListHref({ ...base, resolution: "found" }),
    },
    {
      key: "absent_resent",
      label: "absent → resent",
      count: t.resolutions.absent_resent,
      color: "var(--seg-resent)",
      href: intentListHref({ ...base, resolution: "absent_resent" }),
    },
    {
      key: "human",
      label: "human confirmed",
      count: humanCount(t),
      color: "var(--seg-human)",
      href: intentListHref({ ...base, resolution: "human" }),
    },
    {
      key: "open",
      label: "still open",
      count: t.resolutions.open,
      color: "var(--seg-open)",
      href: intentListHref({ ...base, status: "UNKNOWN" }),
    },
  ];
}

/** The URL parameters of the overview: the window, the tenant and `all=1` (tools with no calls too). */
const OVERVIEW_PARAMS: Record<string, ParamRule> = {
  tenant: COMMON_PARAMS.tenant,
  range: COMMON_PARAMS.range,
  from: COMMON_PARAMS.from,
  to: COMMON_PARAMS.to,
  all: { kind: "oneOf", values: ["1"] },
  sort: { kind: "any" },
};

const col = createColumnHelper<ToolStats>();

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
  const range = parseTimeRange({ get: (name) => params[name] ?? null }, now);
  const { fromEpochMs, toEpochMs } = range;
  const span = useMemo(() => ({ fromEpochMs, toEpochMs }), [fromEpochMs, toEpochMs]);
  const showIdle = params.all === "1";
  const stats = useQuery({
    ...trpc.stats.overview.queryOptions({ ...span, buckets: 20, ...tenant.input }),
    refetchInterval: live(AGGREGATES_REFETCH_MS),
    placeholderData: (previous) => previous,
  });

  const columns = useMemo(
    (): Columns<ToolStats> => [
      col.accessor("tool", { header: "Tool", cell: (c) => <strong>{c.getValue()}</strong> }),
      col.accessor("calls", { header: "Calls", meta: { testId: "calls", numeric: true } }),
      col.accessor("unknownShare", {
        header: "UNKNOWN share",
        meta: { testId: "unknown-share", numeric: true },
        cell: (c) => formatShare(c.row.original.calls ? c.getValue() : 0),
      }),
      col.accessor("unknownShareChange", {
        header: "vs previous",
        meta: { testId: "unknown-change", numeric: true },
        sortUndefined: "last",
        cell: (c) => {
          const v = c.getValue();
          return (
            <span
              className={v && v > 0 ? "up" : v && v < 0 ? "down" : undefined}
              title={`previous period: ${formatShare(c.row.original.previous.unknownShare)} of ${countOf(c.row.original.previous.calls, "call")}`}
            >
              {formatShareChange(v)}
            </span>
          );
        },
      }),
      col.display({
        id: "mix",
        header: "Resolution mix",
        cell: (c) => (
          <ResolutionBar
            segments={segmentsOf(c.row.original, span)}
            onOpen={(href) => router.push(tenant.href(href))}
          />
        ),
      }),
      ...(
        [
          ["found", "Found", "resolution-found"],
          ["absent_resent", "Absent → resent", "resolution-absent_resent"],
          ["human", "Human confirmed", "resolution-human"],
          ["open", "Still open", "resolution-open"],
        ] as const
      ).map(([key, header, testId]) =>
        col.accessor((t) => (key === "human" ? humanCount(t) : t.resolutions[key]), {
          id: key,
          header,
          meta: { testId, numeric: true },
          cell: (c) => {
            const segment = segmentsOf(c.row.original, span).find((s) => s.key === key)!;
            return (
              <TenantLink
                href={segment.href}
                aria-label={`${c.getValue()} ${segment.label} for ${c.row.original.tool}`}
              >
                {c.getValue()}
              </TenantLink>
            );
          },
        }),
      ),
      col.accessor("compensationsFailed", {
        header: "Compensations run / failed",
        meta: { testId: "compensations", numeric: true },
        cell: (c) => (
          <>
            {c.row.original.compensationsRun} /{" "}
            <span className={c.getValue() > 0 ? "failed" : undefined}>{c.getValue()}</span>
            {c.getValue() > 0 ? <span className="visually-hidden"> failed</span> : null}
          </>
        ),
      }),
      col.accessor("stalePendingCount", {
        header: "Stale PENDING",
        meta: { testId: "stale", numeric: true },
        cell: (c) =>
          c.getValue() ? (
            <TenantLink href="/stale">
              {c.getValue()}
              <span className="small"> · oldest {formatDuration(c.row.original.oldestStalePendingAgeMs)}</span>
            </TenantLink>
          ) : (
            0
          ),
      }),
      col.accessor((t) => (t.timeoutMs && t.latency.p99Ms !== null ? t.latency.p99Ms / t.timeoutMs : -1), {
        id: "latency",
        header: "Latency p50 / p95 / p99 vs timeout",
        enableSorting: true,
        meta: { testId: "latency" },
        cell: (c) => {
          const t = c.row.original;
          const ratio = c.getValue() as number;
          return (
            <span className="latency">
              <span className="nowrap">
                {formatDuration(t.latency.p50Ms)} / {formatDuration(t.latency.p95Ms)} /{" "}
                {formatDuration(t.latency.p99Ms)}
              </span>{" "}
              <span className="nowrap small">of {formatDuration(t.timeoutMs)}</span>
              {t.timeoutNearLatency ? (
                <span className="flag block" data-testid="timeout-flag">
                  ⚠ timeout too close: p99 is {Math.round(ratio * 100)}% of it
                </span>
              ) : null}
            </span>
          );
        },
      }),
    ],
    [span, router, tenant],
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
      {stats.error ? <ErrorState error={stats.error} title="Could not load the overview" /> : null}
      {stats.data ? (
        stats.data.tools.length ? (
          <>
            <IdleToggle
              showIdle={showIdle}
              idle={stats.data.tools.filter((t) => t.calls === 0).length}
              href={(all) => tenant.href(overviewHref(params, all))}
            />
            <div className="table-fit">
              <DataTable
                label="Reliability per tool"
                data={showIdle ? stats.data.tools : stats.data.tools.filter((t) => t.calls > 0)}
                columns={columns}
                sorting={parseSortParam(
                  params.sort,
                  columns.map((c) => c.id ?? String((c as { accessorKey?: string }).accessorKey ?? "")),
                )}
                onSortingChange={(sorting) => {
                  const { tenant: _, ...rest } = params; // tenant.href adds it back
                  const search = withSortParam(rest, sorting);
                  router.replace(tenant.href(`/overview${search ? `?${search}` : ""}`), { scroll: false });
                }}
              />
            </div>
            <p className="bar-legend">
              {segmentsOf(stats.data.tools[0]!, span).map((s) => (
                <span key={s.key}>
                  <span className="swatch" style={{ background: s.color }} aria-hidden="true" />
                  {s.label}
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
