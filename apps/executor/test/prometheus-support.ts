/**
 * A real Prometheus (Debian's `prometheus` binary) for tests: started on a free loopback port with a
 * temporary config that scrapes one target's /metrics every second with a bearer token and evaluates a
 * rules file every second; stopped (and its port checked free) by {@link RunningPrometheus.stop}.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, listening } from "./processes.ts";

/** The repository's alert rules (tooling/prometheus/rules/tristate-alerts.yml). */
const SHIPPED_RULES = join(import.meta.dirname, "..", "..", "..", "tooling/prometheus/rules/tristate-alerts.yml");

/** An alert as Prometheus' `GET /api/v1/alerts` lists it. */
export interface PromAlert {
  labels: { alertname: string; [name: string]: string };
  annotations: Record<string, string>;
  state: "pending" | "firing";
  value: string;
}

/** A running Prometheus. */
export interface RunningPrometheus {
  /** Base URL, e.g. `http://127.0.0.1:39123`. */
  url: string;
  port: number;
  /** Its output so far (stderr and stdout), for failure messages. */
  output(): string;
  /** `GET /api/v1/<path>`'s `data`; throws with Prometheus' error when its status is not `success`. */
  api<T>(path: string, params?: Record<string, string>): Promise<T>;
  /** Alerts now pending or firing. */
  alerts(): Promise<PromAlert[]>;
  /** SIGTERM (SIGKILL after 10 s), wait for the exit, remove its folder. */
  stop(): Promise<void>;
}

/**
 * The shipped rules with only their `for:` durations shortened to `forSeconds` (each `for:` line, and
 * nothing else, changes). @throws Error when the text has no `for:` line to shorten.
 */
export function rulesWithShortFor(source: string, forSeconds: number): string {
  const rewritten = source.replace(/^(\s+for: )\d+[smh]$/gm, `$1${forSeconds}s`);
  const before = source.split("\n");
  const changed = rewritten.split("\n").filter((line, i) => line !== before[i]);
  if (changed.length === 0 || changed.some((line) => !/^\s+for: \d+s$/.test(line))) {
    throw new Error(`the rules' for: durations were not shortened as expected: ${JSON.stringify(changed)}`);
  }
  return rewritten;
}

/**
 * Starts `prometheus` scraping `target` (`host:port`) at `/metrics` under job `tristate-executor` with
 * `Authorization: Bearer <token>`, evaluating `rules` (the rules file's text); scrape and evaluation every
 * second. Resolves once Prometheus answers `/-/ready`.
 * @throws Error with Prometheus' output when it exits or is not ready within 30 s.
 */
export async function startPrometheus(options: { target: string; token: string; rules: string }) {
  const dir = mkdtempSync(join(tmpdir(), "tristate-prometheus-"));
  writeFileSync(join(dir, "token"), options.token);
  writeFileSync(join(dir, "rules.yml"), options.rules);
  // JSON is YAML: no YAML library needed.
  const config = {
    global: { scrape_interval: "1s", evaluation_interval: "1s", scrape_timeout: "900ms" },
    rule_files: [join(dir, "rules.yml")],
    scrape_configs: [
      {
        job_name: "tristate-executor",
        metrics_path: "/metrics",
        authorization: { type: "Bearer", credentials_file: join(dir, "token") },
        static_configs: [{ targets: [options.target] }],
      },
    ],
  };
  writeFileSync(join(dir, "prometheus.yml"), JSON.stringify(config, null, 2));
  const port = await freePort();
  const child: ChildProcess = spawn(
    "prometheus",
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  const collect = (chunk: Buffer) => {
    out = `${out}${chunk.toString()}`.slice(-20_000);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}`;

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(`prometheus exited before it was ready:\n${out}`);
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus was not ready within 30 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }

  const api = async <T>(path: string, params: Record<string, string> = {}): Promise<T> => {
    const res = await fetch(`${url}/api/v1/${path}?${new URLSearchParams(params)}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== "success") throw new Error(`prometheus ${path}: ${body.error ?? res.status}`);
    return body.data;
  };
  return {
    url,
    port,
    output: () => out,
    api,
    alerts: async () => (await api<{ alerts: PromAlert[] }>("alerts")).alerts,
    stop,
  } satisfies RunningPrometheus;
}

/** The shipped rules file's text. */
export function shippedRules(): string {
  return readFileSync(SHIPPED_RULES, "utf8");
}

/** True while something still listens on the port (a stopped Prometheus must leave it free). */
export const portInUse = listening;
