/** Figures of `pnpm bench:dashboard` and the BENCHMARKS.md section they fill. */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "../paths.ts";

/** Latency percentiles of a sample, ms. */
export interface Percentiles {
  n: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
}

/** `executor.call` latency alone and while the dashboard's reads run. */
export interface HotPathFigures {
  alone: Percentiles;
  duringReads: Percentiles;
}

/** Everything one run measured (`machine` is left out of the JSON file). */
export interface DashboardFigures {
  records: number;
  reads: { name: string; p50Ms: number; p95Ms: number }[];
  hotPath: HotPathFigures;
  machine: {
    cpus: number;
    loadAverage: [number, number, number] | null;
    fillSeconds: number;
    rollupSeconds: number;
    sizes: string;
  };
}

/** Nearest-rank p50/p95/p99 of durations in ms (rounded to 0.01 ms). */
export function percentiles(samples: number[]): Percentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  const r = (x: number) => Math.round(x * 100) / 100;
  return { n: samples.length, p50Ms: r(at(0.5)), p95Ms: r(at(0.95)), p99Ms: r(at(0.99)) };
}

const START = "<!-- bench:dashboard:start -->";
const END = "<!-- bench:dashboard:end -->";

/** A Markdown table with padded columns (as the formatter writes them). */
function table(head: string[], rows: string[][], right: boolean[]): string {
  const widths = head.map((h, i) => Math.max(3, h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (right[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(" | ")} |`;
  const rule = `| ${widths.map((w, i) => (right[i] ? `${"-".repeat(w - 1)}:` : "-".repeat(w))).join(" | ")} |`;
  return [line(head), rule, ...rows.map(line)].join("\n");
}

/** The section's Markdown for these figures. */
export function markdownSection(f: DashboardFigures): string {
  const fmt = (x: number) => x.toFixed(2);
  const reads = table(
    ["read", "p50 ms", "p95 ms"],
    f.reads.map((r) => [r.name, fmt(r.p50Ms), fmt(r.p95Ms)]),
    [false, true, true],
  );
  const h = f.hotPath;
  const hot = table(
    ["executor.call", "calls", "p50 ms", "p95 ms", "p99 ms"],
    [
      ["alone (5 s, before the reads)", String(h.alone.n), fmt(h.alone.p50Ms), fmt(h.alone.p95Ms), fmt(h.alone.p99Ms)],
      [
        "during the reads (+ rollup refresh every 5 s)",
        String(h.duringReads.n),
        fmt(h.duringReads.p50Ms),
        fmt(h.duringReads.p95Ms),
        fmt(h.duringReads.p99Ms),
      ],
    ],
    [false, true, true, true, true],
  );
  const load = f.machine.loadAverage?.map((x) => x.toFixed(1)).join(" ") ?? "n/a";
  return [
    START,
    "",
    `Last run: ${f.records.toLocaleString("en")} records (filled by SQL in ${f.machine.fillSeconds.toFixed(0)} s, ` +
      `rollups caught up in ${f.machine.rollupSeconds.toFixed(0)} s; ${f.machine.sizes}), ` +
      `${f.machine.cpus} CPUs, load average at the end ${load}. The reads ran in rounds after one warm-up; ` +
      "tenant `default`, 50 items per page.",
    "",
    reads,
    "",
    hot,
    "",
    END,
  ].join("\n");
}

/** Writes the section into BENCHMARKS.md (between its markers, or appended with a heading); returns the path. */
export async function writeMarkdown(f: DashboardFigures): Promise<string> {
  const path = join(REPO_ROOT, "BENCHMARKS.md");
  const text = await readFile(path, "utf8");
  const section = markdownSection(f);
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  const next =
    start >= 0 && end > start
      ? text.slice(0, start) + section + text.slice(end + END.length)
      : `${text.trimEnd()}\n\n## Dashboard reads at scale (\`pnpm bench:dashboard\`, issue 14)\n\n${section}\n`;
  await writeFile(path, next);
  return path;
}
