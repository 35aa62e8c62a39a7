"use client";

import { Bar, BarChart, Tooltip, XAxis, YAxis } from "recharts";
import { formatShare } from "~/lib/format";

/** One segment of the resolution mix. */
export interface MixSegment {
  key: string;
  label: string;
  count: number;
  color: string;
  href: string;
}

/** The resolution mix as one stacked bar; each segment opens the matching records. */
export function ResolutionBar({ segments, onOpen }: { segments: MixSegment[]; onOpen: (href: string) => void }) {
  const total = segments.reduce((sum, s) => sum + s.count, 0);
  const label = total
    ? `Resolution mix: ${segments.map((s) => `${s.label} ${s.count}`).join(", ")}`
    : "Resolution mix: no UNKNOWN outcomes";
  if (!total) return <span className="muted small">no UNKNOWN outcomes</span>;
  const row = Object.fromEntries(segments.map((s) => [s.key, s.count]));
  return (
    <div role="img" aria-label={label} style={{ width: 130, height: 22 }}>
      <BarChart
        width={130}
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
            cursor="pointer"
            onClick={() => onOpen(s.href)}
          />
        ))}
      </BarChart>
    </div>
  );
}
