import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "@tristate/db";
import type { LatencyFigures, ThroughputFigures } from "@tristate/db/bench";

/** One compared variant: one operation, its sequential and concurrent figures. */
export interface PeerFigures {
  name: string;
  /** Steps (tool calls) one operation performs. */
  steps: number;
  sequential: LatencyFigures;
  concurrent: ThroughputFigures;
}

/** What one `pnpm bench:peers` run measured, as written to `bench-results/peers.json`. */
export interface PeersRun {
  figures: PeerFigures[];
  settings: { sequentialIterations: number; concurrency: number; seconds: number; block: number };
  /** The server's `server_version`, `fsync`, `synchronous_commit`, `wal_sync_method`. */
  server: Record<string, string>;
  node: string;
  dbos: string;
  /** 1/5/15-minute load averages at the start and the end (null where unknown). */
  load: { start: number[] | null; end: number[] | null };
  totalSeconds: number;
}

const START = "<!-- peers:start -->";
const END = "<!-- peers:end -->";

/** The markdown table of a run (ratios against the floor of the same run). */
export function peersTable(run: PeersRun): string {
  const floor = run.figures[0]!;
  const f = (ms: number) => ms.toFixed(3);
  const r = (x: number) => Math.round(x).toLocaleString("en-US");
  const header = [
    "variant",
    "p50 ms",
    "p99 ms",
    "p50 / floor",
    `${run.settings.concurrency} concurrent /s`,
    "/ floor",
    "node CPU ms/op",
  ];
  const rows = run.figures.map((x) => [
    x.name,
    f(x.sequential.p50),
    f(x.sequential.p99),
    `${(x.sequential.p50 / floor.sequential.p50).toFixed(2)}×`,
    r(x.concurrent.perSecond),
    `${(x.concurrent.perSecond / floor.concurrent.perSecond).toFixed(2)}×`,
    x.concurrent.processCpuMsPerOp.toFixed(3),
  ]);
  // Aligned as the repository's formatter (biome) writes markdown tables: the first column left, the
  // figures right, so a run leaves BENCHMARKS.md formatted.
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c]!.length)));
  const cells = (row: string[]) =>
    `| ${row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join(" | ")} |`;
  const rule = `| ${widths.map((w, c) => (c === 0 ? "-".repeat(w) : `${"-".repeat(w - 1)}:`)).join(" | ")} |`;
  const lines = [cells(header), rule, ...rows.map(cells)];
  const s = run.server;
  return `${lines.join("\n")}\n\nRun ${new Date().toISOString().slice(0, 16)}Z: PostgreSQL ${s.server_version?.split(" ")[0] ?? "?"} (fsync ${s.fsync}, synchronous_commit ${s.synchronous_commit}, ${s.wal_sync_method}), Node ${run.node}, DBOS Transact ${run.dbos}; ${run.settings.sequentialIterations} sequential samples per variant in alternating blocks of ${run.settings.block} after a warm-up, both databases vacuumed between blocks as autovacuum would (it is off on this server), ${run.settings.seconds} s per concurrent phase; load average ${run.load.start?.[0] ?? "?"} at the start, ${run.load.end?.[0] ?? "?"} at the end (2 cores, shared).`;
}

/**
 * Writes `bench-results/peers.json`, prints the table, and puts it between the `peers` markers of
 * BENCHMARKS.md (appended with its heading when the markers are missing).
 */
export async function writeReport(run: PeersRun): Promise<void> {
  await mkdir(join(REPO_ROOT, "bench-results"), { recursive: true });
  const json = join(REPO_ROOT, "bench-results", "peers.json");
  await writeFile(json, `${JSON.stringify({ at: new Date().toISOString(), ...run }, null, 2)}\n`);
  const table = peersTable(run);
  console.log(`\n${table}\n\nwrote ${json}`);
  const path = join(REPO_ROOT, "BENCHMARKS.md");
  const doc = await readFile(path, "utf8").catch(() => "");
  const block = `${START}\n${table}\n${END}`;
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  const next =
    a >= 0 && b > a
      ? doc.slice(0, a) + block + doc.slice(b + END.length)
      : `${doc.trimEnd()}\n\n## Peers (\`pnpm bench:peers\`)\n\n${block}\n`;
  await writeFile(path, next);
  console.log(`updated ${path}`);
}
