/**
 * Executor replicas as child processes (`apps/executor/src/main.ts` under tsx, as the service's own
 * crash tests start it), each on a fixed port so agents find it again after a restart. A replica is
 * SIGKILLed at random moments and started again at once; one may run with a skewed clock.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const EXECUTOR_DIR = resolve(here, "..", "..", "..", "apps", "executor");
const SKEW_MODULE = join(here, "skew-clock.mjs");

/** One replica slot: a port and the process running on it now (if any). */
export interface Replica {
  readonly index: number;
  readonly port: number;
  readonly url: string;
  /** The clock skew of the running process, ms (0: none). */
  skewMs: number;
  child: ChildProcess | null;
  /** True from spawn until the process printed its URL. */
  starting: boolean;
  /** A kill and restart of this replica is under way (one at a time per replica). */
  busy: boolean;
  /** Unexpected exits (not by our SIGKILL) with their code and last output. */
  crashes: { code: number | null; output: string }[];
}

/** Options of {@link ReplicaSet}. */
export interface ReplicaOptions {
  ports: number[];
  /** Environment of every replica (DATABASE_URL, TRISTATE_CONFIG, …); set before the first start. */
  env: Record<string, string>;
}

/** The replicas of a campaign. */
export class ReplicaSet {
  readonly replicas: Replica[];
  private stopped = false;

  constructor(private readonly options: ReplicaOptions) {
    this.replicas = options.ports.map((port, index) => ({
      index,
      port,
      url: `http://127.0.0.1:${port}`,
      skewMs: 0,
      child: null,
      starting: false,
      busy: false,
      crashes: [],
    }));
  }

  /** Sets environment variables of every replica started from now on. */
  setEnv(env: Record<string, string>): void {
    Object.assign(this.options.env, env);
  }

  /** URLs of every replica (an agent tries them in turn). */
  get urls(): string[] {
    return this.replicas.map((r) => r.url);
  }

  /**
   * Starts the replica's process; resolves when it prints its URL (or rejects after 60 s). An exit
   * the campaign did not cause is recorded and the replica started again (a supervisor's restart),
   * so the checks can report it.
   */
  start(r: Replica, skewMs = 0): Promise<void> {
    r.skewMs = skewMs;
    r.starting = true;
    const child = spawn(
      process.execPath,
      ["--import", "tsx", ...(skewMs ? ["--import", SKEW_MODULE] : []), "src/main.ts"],
      {
        cwd: EXECUTOR_DIR,
        env: {
          ...process.env,
          NODE_OPTIONS: "",
          LOG_LEVEL: "fatal",
          ...this.options.env,
          PORT: String(r.port),
          TRISTATE_CHAOS_SKEW_MS: String(skewMs),
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    r.child = child;
    let out = "";
    const onData = (c: Buffer) => {
      out = (out + c.toString()).slice(-4000);
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    let killedByUs = false;
    (child as ChildProcess & { chaosKill?: () => void }).chaosKill = () => {
      killedByUs = true;
    };
    return new Promise<void>((resolvePromise, reject) => {
      const timer = setTimeout(() => reject(new Error(`replica ${r.index} did not start in 60 s:\n${out}`)), 60_000);
      child.stdout?.on("data", () => {
        if (r.starting && /Tristate executor at http/.test(out)) {
          r.starting = false;
          clearTimeout(timer);
          resolvePromise();
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        if (r.child === child) r.child = null;
        r.starting = false;
        if (killedByUs || this.stopped) return resolvePromise();
        r.crashes.push({ code, output: out });
        resolvePromise();
        // A supervisor's restart, a moment later (no busy loop if it keeps failing).
        setTimeout(() => {
          if (!this.stopped && !r.child && !r.busy) void this.start(r, 0).catch(() => {});
        }, 500);
      });
    });
  }

  /** SIGKILL of the replica's process (waits for its exit), then starts it again with `skewMs`. */
  async killAndRestart(r: Replica, skewMs = 0): Promise<void> {
    if (r.busy) return;
    r.busy = true;
    try {
      await this.kill(r);
      if (!this.stopped && !r.child) void this.start(r, skewMs).catch(() => {});
    } finally {
      r.busy = false;
    }
  }

  /** SIGKILL, waiting for the exit. */
  async kill(r: Replica): Promise<void> {
    const child = r.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    (child as ChildProcess & { chaosKill?: () => void }).chaosKill?.();
    const exited = new Promise<void>((res) => child.once("exit", () => res()));
    child.kill("SIGKILL");
    await exited;
  }

  /** Waits until every replica is up (started again after its last kill), at most `timeoutMs`. */
  async allUp(timeoutMs = 90_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (const r of this.replicas) {
      if (!r.child && !r.starting && !this.stopped) void this.start(r, r.skewMs).catch(() => {});
    }
    while (this.replicas.some((r) => !r.child || r.starting)) {
      if (Date.now() > end) throw new Error("replicas did not come back up");
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  /** SIGKILLs every replica and starts none again. */
  async stopAll(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.replicas.map((r) => this.kill(r)));
  }
}
