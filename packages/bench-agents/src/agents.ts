/**
 * `pnpm bench:agents` (issue 21): N concurrent agents (default 200) through the service's HTTP API,
 * each calling `calls.execute` one call after another with a 10 s budget (`budgetMs: 10000`) and a new
 * run per call, for a fixed window. It reports, per call timed from the moment the client sent it,
 * p50/p99/max, throughput, the share answered after the deadline (goal 0) and after the deadline minus
 * the executor's reserve (`DEFAULT_RESERVE_MS`; the executor's rule: 0), outcome and code counts, the
 * effects counted at the remote (duplicates: goal 0), and the load average; and a floor measured in the
 * same run: the same agents POSTing straight to the remote, no Tristate.
 *
 * Setup: a fresh PostgreSQL database (`createTestDatabase`, dropped at the end); the service in its
 * own process (`apps/executor/src/main.ts`) with its default settings (pool of 40, background
 * outcomes, sweeper, rollups) and the example catalog (`tristate.config.ts`), whose `issue_refund`
 * (`idempotent_by_key`, key and identity probes) calls the fake payment remote (`startFakeRemote`) on
 * loopback, which answers every POST after a latency drawn uniformly from 20–150 ms. The agents use
 * `@tristate/client` over undici keep-alive pools bound to 127.0.0.2… (so no address passes the
 * service's 100 connections per address). Writes `bench-results/agents-<N>.json`.
 *
 * Knobs (environment): BENCH_AGENTS (200), BENCH_SECONDS (30), BENCH_FLOOR_SECONDS (5),
 * BENCH_WARMUP_SECONDS (2), BENCH_BUDGET_MS (10000), BENCH_LATENCY_MIN_MS (20), BENCH_LATENCY_MAX_MS (150).
 * A run takes about seconds + floor + 2 × warm-up + 10 s, plus the drain of the last calls (≤ budget + 5 s).
 */
import { join } from "node:path";
import { createTristateClient } from "@tristate/client";
import { DEFAULT_RESERVE_MS } from "@tristate/core";
import { REPO_ROOT } from "@tristate/db";
import { loadAverage } from "@tristate/db/bench";
import { type AgentsRun, codeState, writeAgentsReport } from "./agents-report.ts";
import { type CallResult, lateShare, outcomeCounts, phaseFigures, runAgents } from "./load.ts";
import {
  freshDatabaseWithAgentKey,
  loopbackFetches,
  type SlowRemote,
  startServiceChild,
  startSlowRemote,
} from "./stack.ts";

const num = (name: string, def: number) => {
  const v = Number(process.env[name] ?? def);
  if (!Number.isFinite(v) || v < 0) throw new TypeError(`${name} must be a non-negative number`);
  return v;
};

const AGENTS = num("BENCH_AGENTS", 200);
const SECONDS = num("BENCH_SECONDS", 30);
const FLOOR_SECONDS = num("BENCH_FLOOR_SECONDS", 5);
const WARMUP_SECONDS = num("BENCH_WARMUP_SECONDS", 2);
const BUDGET_MS = num("BENCH_BUDGET_MS", 10_000);
const LATENCY = { minMs: num("BENCH_LATENCY_MIN_MS", 20), maxMs: num("BENCH_LATENCY_MAX_MS", 150) };
/** Loopback source addresses: 50 agents each at 200 agents, under the service's 100 per address. */
const ADDRESSES = Math.max(1, Math.ceil(AGENTS / 50));

/** Refunds by order id, as the agents were answered (warm-up included), to check against the remote. */
const answered = new Map<string, string>();

/** The same agents POSTing straight to the remote: one keyed refund each, then the next. */
function floorCall(remote: SlowRemote, fetches: (typeof fetch)[]) {
  return async (agent: number, i: number): Promise<CallResult> => {
    const response = await fetches[agent % fetches.length]!(`${remote.url}/effects`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": `floor-${agent}-${i}` },
      body: JSON.stringify({ order_id: `F${agent}-${i}`, amount: "12.50", currency: "EUR" }),
    });
    await response.text();
    return { outcome: String(response.status), code: null };
  };
}

/** Effects at the remote for the service phase's order ids (`A…`), against what the agents were told. */
function countEffects(remote: SlowRemote): AgentsRun["effects"] {
  const perOrder = new Map<string, number>();
  for (const e of remote.remote.effects) {
    const id = String(e.body.order_id ?? "");
    if (id.startsWith("A")) perOrder.set(id, (perOrder.get(id) ?? 0) + 1);
  }
  let total = 0;
  let duplicates = 0;
  let afterNoEffect = 0;
  for (const [id, n] of perOrder) {
    total += n;
    duplicates += n - 1;
    if (answered.get(id) === "FAILED_NO_EFFECT") afterNoEffect++;
  }
  let succeededWithoutEffect = 0;
  for (const [id, outcome] of answered) if (outcome === "SUCCEEDED" && !perOrder.has(id)) succeededWithoutEffect++;
  return { total, duplicates, afterNoEffect, succeededWithoutEffect };
}

async function main(): Promise<void> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const code = codeState();
  const load: AgentsRun["load"] = { start: loadAverage(), afterFloor: null, end: null, peak1m: null };
  const peak = setInterval(() => {
    const now = loadAverage()?.[0] ?? null;
    if (now !== null) load.peak1m = Math.max(load.peak1m ?? 0, now);
  }, 1_000);
  const { db, agentKey } = await freshDatabaseWithAgentKey();
  const remote = await startSlowRemote(LATENCY);
  const net = loopbackFetches(ADDRESSES);
  const serviceEnv = {
    DATABASE_URL: db.url,
    TRISTATE_CONFIG: join(REPO_ROOT, "tristate.config.ts"),
    TRISTATE_PAYMENTS_URL: remote.url,
  };
  const service = await startServiceChild(serviceEnv);
  try {
    const floor = await runAgents(AGENTS, WARMUP_SECONDS, FLOOR_SECONDS, floorCall(remote, net.fetches));
    load.afterFloor = loadAverage();
    const clients = net.fetches.map((fetch) => createTristateClient({ url: service.url, apiKey: agentKey, fetch }));
    const through = await runAgents(AGENTS, WARMUP_SECONDS, SECONDS, async (agent, i) => {
      const orderId = `A${agent}-${i}`;
      const envelope = await clients[agent % clients.length]!.execute({
        runId: `agents-${agent}-${i}`,
        stepId: "refund",
        tool: "issue_refund",
        args: { order_id: orderId, amount: "12.50", currency: "EUR" },
        budgetMs: BUDGET_MS,
      }).catch((error: unknown) => {
        answered.set(orderId, "error");
        throw error;
      });
      answered.set(orderId, envelope.status);
      return { outcome: envelope.status, code: envelope.error?.code ?? null };
    });
    load.end = loadAverage();
    // Calls a client gave up on may still be running in the service: count effects once it stopped.
    await service.stop();
    const s = phaseFigures(through);
    const f = phaseFigures(floor);
    const run: AgentsRun = {
      startedAt,
      code,
      settings: {
        agents: AGENTS,
        budgetMs: BUDGET_MS,
        reserveMs: DEFAULT_RESERVE_MS,
        seconds: SECONDS,
        floorSeconds: FLOOR_SECONDS,
        warmupSeconds: WARMUP_SECONDS,
        remoteLatencyMs: { min: LATENCY.minMs, max: LATENCY.maxMs },
        sourceAddresses: ADDRESSES,
        serviceEnv: { TRISTATE_CONFIG: "tristate.config.ts", TRISTATE_PAYMENTS_URL: "(the fake remote)" },
      },
      service: {
        ...s,
        afterDeadline: lateShare(through.samples, BUDGET_MS),
        afterDeadlineMinusReserve: lateShare(through.samples, BUDGET_MS - DEFAULT_RESERVE_MS),
        ...outcomeCounts(through.samples),
      },
      floor: { ...f, outcomes: outcomeCounts(floor.samples).outcomes },
      ratio: { p50: s.p50Ms / f.p50Ms, p99: s.p99Ms / f.p99Ms, throughput: s.callsPerSecond / f.callsPerSecond },
      effects: countEffects(remote),
      load,
      node: process.version,
      totalSeconds: (performance.now() - started) / 1000,
    };
    await writeAgentsReport(run);
  } finally {
    clearInterval(peak);
    await service.stop();
    await net.close();
    await remote.close();
    await db.drop();
  }
  const errors = service.output().trim();
  if (errors)
    process.stdout.write(`\nthe service's warnings and errors (last 2,000 characters):\n${errors.slice(-2_000)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
