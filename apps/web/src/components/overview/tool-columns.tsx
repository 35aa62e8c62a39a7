"use client";

import { type ColumnDef, createColumnHelper } from "@tanstack/react-table";
import { Fragment, type ReactNode } from "react";
import { ResolutionBar } from "~/components/charts";
import type { Columns } from "~/components/data-table";
import { TenantLink } from "~/components/tenant-filter";
import { countOf, formatDuration, formatShare, formatShareChange } from "~/lib/format";
import { MIX_KEYS, mixCategory, mixSegments } from "~/lib/resolution-mix";
import type { ToolStats } from "~/trpc/types";

const col = createColumnHelper<ToolStats>();

/** The latency cell: p50 / p95 / p99 against the timeout, and the warning when the timeout is too close. */
function Latency({ t, ratio }: { t: ToolStats; ratio: number }) {
  return (
    <span className="latency">
      <span className="nowrap">{formatDuration(t.latency.p50Ms)} /</span>{" "}
      <span className="nowrap">{formatDuration(t.latency.p95Ms)} /</span>{" "}
      <span className="nowrap">{formatDuration(t.latency.p99Ms)}</span>{" "}
      <span className="nowrap small">of {formatDuration(t.timeoutMs)}</span>
      {t.timeoutNearLatency ? (
        <span className="flag block" data-testid="timeout-flag">
          ⚠ timeout too close: p99 is {Math.round(ratio * 100)}% of it
        </span>
      ) : null}
    </span>
  );
}

/** One column per category of the resolution mix, its header marked with the category's colour. */
function resolutionColumns(window: { fromEpochMs: number; toEpochMs: number }): Columns<ToolStats> {
  return MIX_KEYS.map((key) =>
    col.accessor((t) => t.resolutions[key], {
      id: key,
      header: () => {
        const s = mixCategory(key);
        return (
          <span title={s.meaning}>
            <span className="swatch" style={{ background: s.color }} aria-hidden="true" />
            {s.header}
          </span>
        );
      },
      meta: { testId: `resolution-${key}`, numeric: true },
      cell: (c) => {
        const segment = mixSegments(c.row.original, window).find((s) => s.key === key)!;
        const name = `${c.getValue()} ${segment.label} for ${c.row.original.tool}`;
        return segment.href ? (
          <TenantLink href={segment.href} aria-label={name}>
            {c.getValue()}
          </TenantLink>
        ) : (
          <span title={`${segment.label}: ${segment.meaning}`}>{c.getValue()}</span>
        );
      },
    }),
  );
}

/** A tool name with a line-break opportunity after each '.' and '_' (`airline.update_reservation`). */
function breakAfterSeparators(name: string): ReactNode[] {
  let at = 0;
  return name.split(/(?<=[._])/).map((part) => {
    const start = at;
    at += part.length;
    return (
      <Fragment key={start}>
        {start ? <wbr /> : null}
        {part}
      </Fragment>
    );
  });
}

/**
 * The overview table's columns: the tool (long names wrap after a '.' or '_', never cut), calls,
 * the UNKNOWN share and its change, the mix bar, one column per way an UNKNOWN ended (grouped under
 * one header), compensations, stale PENDING and latency against the timeout. `onOpen` opens a
 * segment's records (the mix bar's click).
 */
export function toolColumns(
  window: { fromEpochMs: number; toEpochMs: number },
  onOpen: (href: string) => void,
): Columns<ToolStats> {
  return [
    col.accessor("tool", {
      header: "Tool",
      cell: (c) => (
        <strong className="tool-name" data-testid="tool-name">
          {breakAfterSeparators(c.getValue())}
        </strong>
      ),
    }),
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
            className={`nowrap${v && v > 0 ? " up" : v && v < 0 ? " down" : ""}`}
            title={`previous period: ${formatShare(c.row.original.previous.unknownShare)} of ${countOf(c.row.original.previous.calls, "call")}`}
          >
            {formatShareChange(v)}
          </span>
        );
      },
    }),
    col.display({
      id: "mix",
      header: "Mix",
      meta: { testId: "mix" },
      cell: (c) => (
        <ResolutionBar
          segments={mixSegments(c.row.original, window)}
          unknownCount={c.row.original.unknownCount}
          onOpen={onOpen}
        />
      ),
    }),
    col.group({ id: "ended", header: "How the UNKNOWNs ended", columns: resolutionColumns(window) }),
    col.accessor("compensationsFailed", {
      header: "Compen­sations run / failed",
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
            <span className="small block"> oldest {formatDuration(c.row.original.oldestStalePendingAgeMs)}</span>
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
      cell: (c) => <Latency t={c.row.original} ratio={c.getValue() as number} />,
    }),
  ];
}

/** The ids of the leaf columns (the sortable ones), groups flattened. */
export function leafColumnIds(columns: Columns<ToolStats>): string[] {
  return columns.flatMap((c: ColumnDef<ToolStats, unknown>) =>
    "columns" in c && c.columns
      ? leafColumnIds(c.columns as Columns<ToolStats>)
      : [c.id ?? String((c as { accessorKey?: string }).accessorKey ?? "")],
  );
}
