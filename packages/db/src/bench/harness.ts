/**
 * The benchmarks' shared harness: latency and throughput phases, machine figures (CPU from
 * /proc/stat, load average), and the loopback remote with the benchmarked tool. Used by
 * `pnpm bench:core` and `pnpm bench:peers`.
 */
import { readFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { type AnyTool, callHttp, canon, type Deadline, defineTool } from "@tristate/core";
import { z } from "zod";

/** Latency summary of one sequential phase, ms. */
export interface LatencyFigures {
  n: number;
  p50: number;
  p99: number;
  mean: number;
}

/** Throughput of one concurrent phase. */
export interface ThroughputFigures {
  concurrency: number;
  seconds: number;
  operations: number;
  perSecond: number;
  /** CPU of the whole machine per operation, ms (from /proc/stat; includes PostgreSQL and anything else running). */
  machineCpuMsPerOp: number | null;
  /** CPU of this process (client, remote's worker thread, PGlite when embedded) per operation, ms. */
  processCpuMsPerOp: number;
}

/** Busy CPU time of the whole machine so far, ms (null where /proc/stat is missing). */
export function machineBusyMs(): number | null {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!;
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return ((user! + nice! + system! + irq! + softirq! + steal!) * 1000) / 100; // USER_HZ = 100
  } catch {
    return null;
  }
}

/** p50, p99 and mean of durations, ms. */
export function latency(samples: number[]): LatencyFigures {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return {
    n: samples.length,
    p50: at(0.5),
    p99: at(0.99),
    mean: samples.reduce((a, b) => a + b, 0) / samples.length,
  };
}

/** Runs `op(i)` `warmup + n` times one after another; the last `n` durations, ms. */
export async function sequential(
  n: number,
  warmup: number,
  op: (i: number) => Promise<unknown>,
): Promise<LatencyFigures> {
  const samples: number[] = [];
  for (let i = 0; i < warmup + n; i++) {
    const t = performance.now();
    await op(i);
    const dt = performance.now() - t;
    if (i >= warmup) samples.push(dt);
  }
  return latency(samples);
}

/** `workers` loops each running `op(worker, i)` back to back for `seconds` (after a 0.5 s warm-up). */
export async function concurrent(
  workers: number,
  seconds: number,
  op: (worker: number, i: number) => Promise<unknown>,
): Promise<ThroughputFigures> {
  let counting = false;
  let stop = false;
  let done = 0;
  const loops = Array.from({ length: workers }, async (_, w) => {
    for (let i = 0; !stop; i++) {
      await op(w, i);
      if (counting) done++;
    }
  });
  await sleep(500);
  counting = true;
  const t = performance.now();
  const machine0 = machineBusyMs();
  const cpu0 = process.cpuUsage();
  await sleep(seconds * 1000);
  const elapsed = (performance.now() - t) / 1000;
  counting = false;
  const operations = done;
  const cpu = process.cpuUsage(cpu0);
  const machine1 = machineBusyMs();
  stop = true;
  await Promise.all(loops);
  return {
    concurrency: workers,
    seconds: elapsed,
    operations,
    perSecond: operations / elapsed,
    machineCpuMsPerOp: machine0 === null || machine1 === null ? null : (machine1 - machine0) / operations,
    processCpuMsPerOp: (cpu.user + cpu.system) / 1000 / operations,
  };
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The loopback remote: node:http in a worker thread (its own event loop), 201 JSON at once. */
export async function startRemote(): Promise<{ url: string; stop(): Promise<void> }> {
  const worker = new Worker(
    `const http = require("node:http");
     const { parentPort } = require("node:worker_threads");
     let n = 0;
     const server = http.createServer((req, res) => {
       req.resume();
       req.on("end", () => {
         const body = JSON.stringify({ id: "ch_" + (++n), status: "succeeded" });
         res.writeHead(201, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
         res.end(body);
       });
     });
     server.keepAliveTimeout = 60000;
     server.listen(0, "127.0.0.1", () => parentPort.postMessage(server.address().port));`,
    { eval: true },
  );
  const port = await new Promise<number>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  return {
    url: `http://127.0.0.1:${port}/charges`,
    async stop() {
      await worker.terminate();
    },
  };
}

/** The benchmarked tool: a charge on the loopback remote, keyed, with a (never used) key probe. */
export function chargeTool(url: string): AnyTool {
  return defineTool({
    name: "create_charge",
    kind: "idempotent_by_key",
    args: z.object({ order_id: z.string(), amount: z.number() }),
    identity: { order_id: canon.upper, amount: canon.decimal(2) },
    timeoutMs: 5_000,
    async invoke(args, ctx) {
      const response = await callHttp(ctx, { method: "POST", url, body: args });
      return response.body;
    },
    async probe() {
      return null;
    },
  });
}

/** The bare call: the tool's `invoke` with the context the executor would build, no intent log. */
export function bareCall(tool: AnyTool, i: number, deadline: Deadline): Promise<unknown> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), tool.timeoutMs);
  return tool
    .invoke(
      { order_id: `a-${i}`, amount: 10 },
      { idempotencyKey: `bare-${i}`, signal: controller.signal, timeoutMs: tool.timeoutMs, deadline, attempt: 1 },
    )
    .finally(() => clearTimeout(timer));
}

/** The 1-, 5- and 15-minute load averages (null where /proc/loadavg is missing): report them next to figures. */
export function loadAverage(): [number, number, number] | null {
  try {
    const [a, b, c] = readFileSync("/proc/loadavg", "utf8").split(" ").map(Number);
    return [a!, b!, c!];
  } catch {
    return null;
  }
}
