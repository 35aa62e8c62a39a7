"use client";

import { Bar, CartesianGrid, ComposedChart, Line, Tooltip, XAxis, YAxis } from "recharts";
import { useDisplayZone } from "~/components/time-zone-toggle";
import {
  axisTicks,
  axisZoneLabel,
  countOf,
  displayZoneName,
  formatAxisTick,
  formatShare,
  formatTime,
} from "~/lib/format";
import { peakOf, worstFirst } from "~/lib/series-order";
import type { ToolStats } from "~/trpc/types";

const WIDTH = 320;
const HEIGHT = 150;

/** The tooltip's lines: the slice's calls and how many of them were UNKNOWN. */
function formatSeriesValue(value: unknown, name: unknown, unknownCount: number): [string, string] {
  if (name === "UNKNOWN share") return [`${value}% (${unknownCount} UNKNOWN)`, "UNKNOWN share"];
  return [countOf(Number(value), "call"), "in this slice"];
}

/**
 * Calls (bars) and UNKNOWN share (line, right axis) per tool over the chosen window, one small chart
 * per tool with calls, worst first ({@link worstFirst}), with axes and a tooltip that counts a slice's
 * calls; the caption names the busiest slice's calls; the chart's name says the totals for screen readers.
 * The time axis and the tooltip are in the page's zone (the header's toggle), the axis labelled with it.
 */
export function ToolSeries({ tools, spanMs }: { tools: ToolStats[]; spanMs: number }) {
  const zone = useDisplayZone();
  const shown = worstFirst(tools.filter((t) => t.calls > 0));
  if (!shown.length) return null;
  return (
    <section aria-labelledby="series-heading">
      <h2 id="series-heading">Calls and UNKNOWN share over time</h2>
      <p className="small muted">
        Bars: calls per slice of the window (left axis). Line: the UNKNOWN share (right axis). Times in{" "}
        <span data-testid="chart-zone">{displayZoneName(zone)}</span>.
      </p>
      <div className="series-grid">
        {shown.map((t) => {
          const data = t.sparkline.map((p) => ({
            t: p.startEpochMs,
            calls: p.calls,
            unknown: p.unknownCount,
            share: p.unknownShare === null ? null : Math.round(p.unknownShare * 1000) / 10,
          }));
          const peak = peakOf(data);
          return (
            <figure key={t.tool} className="series" data-testid="tool-series" data-tool={t.tool}>
              <figcaption>
                <strong>{t.tool}</strong>{" "}
                <span className="small muted">
                  {countOf(t.calls, "call")}, {formatShare(t.unknownShare)} UNKNOWN
                </span>
                {peak ? (
                  <span className="small muted block" data-testid="series-peak" suppressHydrationWarning>
                    Busiest slice: {countOf(peak.calls, "call")} from {formatTime(peak.t, zone)}
                  </span>
                ) : null}
              </figcaption>
              <div
                role="img"
                aria-label={`${t.tool}: ${countOf(t.calls, "call")} and ${formatShare(t.unknownShare)} UNKNOWN over the window, in ${data.length} slices${peak ? `, at most ${countOf(peak.calls, "call")} in one` : ""}`}
              >
                <ComposedChart
                  width={WIDTH}
                  height={HEIGHT}
                  data={data}
                  margin={{ top: 6, right: 4, bottom: 14, left: -18 }}
                >
                  <CartesianGrid strokeDasharray="3 3" vertical={false} />
                  <XAxis
                    dataKey="t"
                    type="number"
                    domain={["dataMin", "dataMax"]}
                    ticks={axisTicks(data[0]?.t ?? 0, data.at(-1)?.t ?? 0, zone)}
                    tickFormatter={(v: number) => formatAxisTick(v, spanMs, zone)}
                    tick={{ fontSize: 10 }}
                    label={{ value: axisZoneLabel(zone), position: "insideBottom", offset: -12, fontSize: 10 }}
                    minTickGap={24}
                  />
                  <YAxis yAxisId="calls" allowDecimals={false} tick={{ fontSize: 10 }} />
                  <YAxis yAxisId="share" orientation="right" domain={[0, 100]} unit="%" tick={{ fontSize: 10 }} />
                  <Tooltip
                    labelFormatter={(v) => formatTime(Number(v), zone)}
                    formatter={(value, name, item) =>
                      formatSeriesValue(value, name, (item?.payload as { unknown?: number } | undefined)?.unknown ?? 0)
                    }
                    wrapperStyle={{ fontSize: 12 }}
                  />
                  <Bar yAxisId="calls" dataKey="calls" name="calls" fill="#5b8fd1" isAnimationActive={false} />
                  <Line
                    yAxisId="share"
                    dataKey="share"
                    name="UNKNOWN share"
                    stroke="#b45f00"
                    strokeWidth={2}
                    dot={{ r: 2 }}
                    connectNulls
                    isAnimationActive={false}
                  />
                </ComposedChart>
              </div>
            </figure>
          );
        })}
      </div>
    </section>
  );
}
