"use client";

import { Bar, BarChart, Tooltip, XAxis, YAxis } from "recharts";
import { formatShare } from "~/lib/format";
import { type MixSegment, mixSummary } from "~/lib/resolution-mix";

/** Width of the mix bar, px. */
const BAR_WIDTH = 110;

/**
 * The resolution mix as one stacked bar, one colour per category; each segment with records opens
 * them. Its accessible name lists the counts ({@link mixSummary}); a row without UNKNOWN shows words.
 */
export function ResolutionBar({
  segments,
  unknownCount,
  onOpen,
}: {
  segments: MixSegment[];
  /** The row's ever-UNKNOWN calls (what the segments break down). */
  unknownCount: number;
  onOpen: (href: string) => void;
}) {
  const total = segments.reduce((sum, s) => sum + s.count, 0);
  const label = `Resolution mix: ${mixSummary(segments, unknownCount)}`;
  if (!total) {
    return (
      <span className="muted small" data-testid="mix-text">
        {mixSummary(segments, unknownCount)}
      </span>
    );
  }
  const row = Object.fromEntries(segments.map((s) => [s.key, s.count]));
  return (
    <div role="img" aria-label={label} title={label} style={{ width: BAR_WIDTH, height: 22 }}>
      <BarChart
        width={BAR_WIDTH}
        height={22}
        data={[row]}
        layout="vertical"
        margin={{ top: 0, right: 0, bottom: 0, left: 0 }}
      >
        <XAxis type="number" hide domain={[0, total]} />
        <YAxis type="category" hide />
        <Tooltip
          cursor={false}
          wrapperStyle={{ zIndex: 10, fontSize: 12 }}
          formatter={(value, name) => [`${value} (${formatShare(Number(value) / total)})`, String(name)]}
        />
        {segments.map((s) => (
          <Bar
            key={s.key}
            dataKey={s.key}
            name={s.label}
            stackId="mix"
            fill={s.color}
            isAnimationActive={false}
            cursor={s.href ? "pointer" : "default"}
            onClick={() => {
              if (s.href) onOpen(s.href);
            }}
          />
        ))}
      </BarChart>
    </div>
  );
}
