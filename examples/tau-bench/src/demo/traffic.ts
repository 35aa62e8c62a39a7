/**
 * What `pnpm demo` puts through the executor besides its report: the example remotes' fault switch
 * (`TRISTATE_DEMO_FAULTS`, the one `npm start` reads) turned into the τ-bench services' faults, a
 * summary of the three outcomes the executor recorded, and a trickle of further tasks while the demo
 * stays up, so the dashboard's charts fill in over minutes instead of one bar.
 */
import {
  DEMO_FAULTS_ON,
  DEMO_LAG_MS,
  type DemoFaultRates,
  demoFaultsFromEnv,
  describeDemoFaults,
} from "@tristate/executor/demo-remotes";
import type { FaultConfig, FaultKind } from "../service/faults.ts";
import { apiCall } from "./api.ts";

/** The τ-bench fault of each kind of the switch (same effect, same answer). */
const TAU_KIND = {
  "timeout-after-commit": "hang",
  "reset-before-commit": "reset",
  "reset-after-commit": "reset-after",
  "504-after-commit": "504",
  lag: "lag",
} as const satisfies Record<keyof DemoFaultRates, FaultKind>;

/** The demo's faults: the τ-bench services' configuration and the switch's value in words. */
export interface DemoFaults {
  faults: Partial<FaultConfig>;
  description: string;
}

/**
 * The τ-bench services' faults from `TRISTATE_DEMO_FAULTS` (unset: `on`, the demo shows faults by
 * default) and `TRISTATE_DEMO_FAULTS_SEED` (unset: `seed`): each kind's rate becomes its weight, the
 * rates' sum the fault rate; `lag` hides effects for the example remotes' lag, answered 504.
 * @throws DemoFaultsError naming the setting and the rule when either is invalid.
 */
export function demoFaultsFor(env: Record<string, string | undefined>, seed: number): DemoFaults {
  const { rates, seed: given } = demoFaultsFromEnv({
    ...env,
    TRISTATE_DEMO_FAULTS: env.TRISTATE_DEMO_FAULTS ?? DEMO_FAULTS_ON,
  });
  const mix: Partial<Record<FaultKind, number>> = {};
  let rate = 0;
  for (const [kind, r] of Object.entries(rates) as [keyof DemoFaultRates, number][]) {
    mix[TAU_KIND[kind]] = r;
    rate += r;
  }
  return {
    faults: { rate: Math.min(1, rate), mix, seed: given ?? seed, lagMs: DEMO_LAG_MS, lagResponse: "504" },
    description: `TRISTATE_DEMO_FAULTS: ${describeDemoFaults(rates)}${env.TRISTATE_DEMO_FAULTS === undefined ? " (the default, `on`)" : ""}`,
  };
}

/** The outcomes of the records created since some instant, as the executor stored them. */
export interface OutcomeSummary {
  records: number;
  /** Records by status: SUCCEEDED, FAILED_NO_EFFECT, UNKNOWN, PENDING. */
  byStatus: Record<string, number>;
  /** Records whose outcome was UNKNOWN at first, by how they ended (`found`, `absent_resent`, …, `needs_human`). */
  byResolution: Record<string, number>;
}

interface ListedRecord {
  status: string;
  resolution: string | null;
}

/**
 * Reads every record created from `fromEpochMs` on (`intents.list`, 200 a page, admin key) and counts
 * them by status and resolution.
 * @throws Error with the API's answer when a page cannot be read.
 */
export async function outcomeSummary(url: string, adminKey: string, fromEpochMs: number): Promise<OutcomeSummary> {
  const summary: OutcomeSummary = { records: 0, byStatus: {}, byResolution: {} };
  let cursor: string | undefined;
  do {
    const page = (await apiCall(url, adminKey, "intents.list", {
      filters: { fromEpochMs },
      limit: 200,
      ...(cursor ? { cursor } : {}),
    })) as { items: ListedRecord[]; nextCursor: string | null };
    for (const r of page.items) {
      summary.records++;
      summary.byStatus[r.status] = (summary.byStatus[r.status] ?? 0) + 1;
      if (r.resolution) summary.byResolution[r.resolution] = (summary.byResolution[r.resolution] ?? 0) + 1;
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return summary;
}

/** The summary in words, e.g. `65 records: SUCCEEDED 50 · FAILED_NO_EFFECT 3 · UNKNOWN 1 …`. */
export function formatOutcomes(s: OutcomeSummary): string {
  const list = (counts: Record<string, number>) =>
    Object.entries(counts)
      .sort(([, a], [, b]) => b - a)
      .map(([k, n]) => `${k} ${n}`)
      .join(" · ") || "none";
  const unknownAtFirst = Object.values(s.byResolution).reduce((a, b) => a + b, 0);
  return [
    `${s.records} records: ${list(s.byStatus)}`,
    `  UNKNOWN at first: ${unknownAtFirst}, reconciled as ${list(s.byResolution)}`,
  ].join("\n");
}

/** A running trickle: `stop()` ends it after the task in progress. */
export interface Trickle {
  stop(): Promise<void>;
}

/**
 * Runs `step(i)` for i = 0, 1, … one at a time, `everyMs` apart, until `count` steps ran or `stop()`
 * is called; a failing step is reported on stderr and the trickle goes on.
 */
export function startTrickle(count: number, everyMs: number, step: (i: number) => Promise<void>): Trickle {
  let stopped = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    for (let i = 0; i < count && !stopped; i++) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, everyMs).unref();
      });
      if (stopped) break;
      try {
        await step(i);
      } catch (error) {
        process.stderr.write(`background task ${i + 1} failed: ${error instanceof Error ? error.message : error}\n`);
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
