"use client";

import { useQuery } from "@tanstack/react-query";
import { createColumnHelper } from "@tanstack/react-table";
import Link from "next/link";
import { useState } from "react";
import { type Columns, DataTable } from "~/components/data-table";
import { RangeFields, WindowText } from "~/components/list-range-picker";
import { useLiveInterval } from "~/components/live-refresh";
import { ParamProblems } from "~/components/param-problems";
import { EmptyState, ErrorState, Loading, NoResults } from "~/components/states";
import { TenantLink, useTenantFilter, withTenantColumn } from "~/components/tenant-filter";
import { Time } from "~/components/time-zone-toggle";
import { formatDuration } from "~/lib/format";
import {
  isRunStatus,
  plannedSteps,
  RUN_STATUSES,
  type RunSummary,
  runDurationLabel,
  runRowStatusLabel,
  runStatusLabel,
} from "~/lib/run-summary";
import { runPath } from "~/lib/search";
import { DEFAULT_PRESET, parseListWindow, RANGE_PRESETS } from "~/lib/time-range";
import { TOOL_FILTER_LABEL, TOOL_FILTER_MAX_LENGTH, toolFilter } from "~/lib/tool-filter";
import { COMMON_PARAMS, checkMaxWindow, checkParams, type ParamRule, withoutProblems } from "~/lib/url-params";
import { useTRPC } from "~/trpc/react";

/** The URL parameters of the runs page. */
const RUNS_PARAMS: Record<string, ParamRule> = {
  ...COMMON_PARAMS,
  status: { kind: "oneOf", values: RUN_STATUSES },
};

/** The widest window `runs.list` reads: 31 days, ms. */
const MAX_RUNS_WINDOW_MS = 31 * 86_400_000;

/** Runs per page. */
const RUNS_PER_PAGE = 50;

/** A run with no call yet: what its declared plan says (its step count, or its tools), from `runs.get`. */
function Planned({ run, what }: { run: RunSummary; what: "label" | "tools" }) {
  const trpc = useTRPC();
  const tenant = useTenantFilter();
  const get = useQuery({
    ...trpc.runs.get.queryOptions({ runId: run.runId, ...(tenant.selectable ? { tenant: run.tenant } : {}) }),
    staleTime: 60_000,
  });
  const planned = plannedSteps(get.data?.plan);
  if (!get.data) return <span className="muted">–</span>;
  return (
    <span className="small" data-testid={what === "label" ? "run-plan-steps" : "run-plan-tools"}>
      {what === "label" ? planned.label : planned.tools.join(", ") || "–"}
    </span>
  );
}

const col = createColumnHelper<RunSummary>();
const columns: Columns<RunSummary> = [
  col.accessor("runId", {
    header: "Run",
    cell: (c) => (
      <TenantLink href={runPath(c.getValue())} className="mono small clip" title={c.getValue()}>
        {c.getValue()}
      </TenantLink>
    ),
  }),
  col.accessor("status", {
    header: "Status",
    cell: (c) => (
      <>
        <span data-status={c.getValue()}>{runRowStatusLabel(c.row.original)}</span>
        {/* Aborted (rule 13) with a step still in flight or waiting for a person: its status says open or attention. */}
        {c.row.original.abortedAtEpochMs !== null && c.getValue() !== "aborted" ? (
          <span className="muted small" data-testid="run-aborted-flag">
            {" "}
            · aborted
          </span>
        ) : null}
      </>
    ),
    meta: { testId: "run-status" },
  }),
  col.accessor("startedAtEpochMs", {
    header: "Started",
    cell: (c) => <Time className="nowrap" epochMs={c.getValue()} />,
  }),
  col.accessor("durationMs", {
    header: "Duration",
    cell: (c) => runDurationLabel(c.row.original, formatDuration),
    meta: { numeric: true },
  }),
  col.accessor("steps", {
    header: "Steps",
    meta: { numeric: true },
    cell: (c) => (c.getValue() === 0 ? <Planned run={c.row.original} what="label" /> : c.getValue()),
  }),
  col.accessor((r) => r.tools.join(", "), {
    id: "tools",
    header: "Tools",
    cell: (c) =>
      c.row.original.steps === 0 ? (
        <Planned run={c.row.original} what="tools" />
      ) : (
        <span className="wrap-anywhere">{c.getValue()}</span>
      ),
  }),
  col.accessor("unresolvedUnknownCount", {
    header: "UNKNOWN now",
    meta: { numeric: true, testId: "run-unknowns" },
  }),
  col.accessor("unknownCount", {
    header: "Ever UNKNOWN",
    meta: { numeric: true, testId: "run-ever-unknown" },
  }),
  col.accessor("needsHumanCount", { header: "For a person", meta: { numeric: true, testId: "run-needs-human" } }),
];

/**
 * The runs that started in the window (`range`, or `from`/`to` epoch ms; default the last 24 hours),
 * newest first, from `runs.list`: status, start, duration, steps, tools, UNKNOWNs unresolved now and
 * ever (resolved included), records waiting for a person; filters `status` and `tool` (a substring of
 * a tool name), keyset pages by `?cursor=` — all in the URL. One filter form (time range, status, tool,
 * one Apply) — a plain GET form, so it works before hydration; a new filter starts at the newest runs. Parameters the page cannot use are named above the list, with the rule.
 */
export function RunsList({
  params,
  initialNowEpochMs,
}: {
  params: Record<string, string>;
  /** The server's clock when it rendered the page (epoch ms): "now" for the default window, the same on
   * the server and in the browser's first render, so the hydrated HTML matches (React #418 otherwise). */
  initialNowEpochMs: number;
}) {
  const live = useLiveInterval();
  const trpc = useTRPC();
  const tenant = useTenantFilter();
  const [now] = useState(initialNowEpochMs);
  const tooWide = checkMaxWindow(params, now, MAX_RUNS_WINDOW_MS);
  const problems = [...checkParams(params, RUNS_PARAMS), ...(tooWide ? [tooWide] : [])];
  const status = isRunStatus(params.status) ? params.status : undefined;
  const tool = toolFilter(params.tool);
  const given = parseListWindow(withoutProblems(params, problems), now);
  const span =
    given.fromEpochMs !== undefined ? given : { fromEpochMs: now - RANGE_PRESETS[DEFAULT_PRESET], toEpochMs: now };
  const page = useQuery({
    ...trpc.runs.list.queryOptions({
      ...span,
      ...(status ? { status } : {}),
      ...(tool ? { tool } : {}),
      limit: RUNS_PER_PAGE,
      ...(params.cursor ? { cursor: params.cursor } : {}),
      ...tenant.input,
    }),
    refetchInterval: live(30_000),
  });
  const runs = page.data?.items ?? [];
  const filtered = Boolean(status || tool || params.cursor);
  const pageHref = (cursor: string | undefined) => {
    const query = new URLSearchParams(Object.entries(params).filter(([k]) => k !== "cursor"));
    if (cursor) query.set("cursor", cursor);
    const search = query.toString();
    return tenant.href(`/runs${search ? `?${search}` : ""}`);
  };

  return (
    <>
      <h2>Runs</h2>
      <ParamProblems problems={problems} path="/runs" kept={withoutProblems(params, problems)} />
      <form method="get" action="/runs" className="toolbar" key={JSON.stringify(params)} aria-label="Filter the runs">
        {tenant.tenant !== undefined ? <input type="hidden" name="tenant" value={tenant.tenant} /> : null}
        <RangeFields params={params} window={page.data ?? span} anyTime={false} defaultPreset={DEFAULT_PRESET} />
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
          <span>{TOOL_FILTER_LABEL}</span>
          <input name="tool" defaultValue={params.tool ?? ""} maxLength={TOOL_FILTER_MAX_LENGTH} />
        </label>
        <button type="submit">Apply</button>
        <WindowText window={page.data ?? span} what="Started" />
      </form>
      {page.isPending ? <Loading what="runs" /> : null}
      {page.error && !page.data ? <ErrorState error={page.error} title="Could not load the runs" /> : null}
      {page.data && runs.length === 0 && !filtered ? (
        <EmptyState>No agent run started in this time range.</EmptyState>
      ) : null}
      {page.data && runs.length === 0 && filtered ? <NoResults>No run matches these filters.</NoResults> : null}
      {runs.length ? (
        <div className="table-fit">
          <DataTable
            label="Runs"
            data={runs}
            columns={withTenantColumn(columns, tenant.showTenant)}
            rowProps={(row) => ({ "data-testid": "run-row", "data-run": row.original.runId })}
          />
        </div>
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
