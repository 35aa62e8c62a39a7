/**
 * Shared helpers of the integration tests: child executor processes (test/fixtures/crash-child.ts),
 * a cleanup stack that always runs (kill children, close pools and remotes, drop databases), and
 * condition waits.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { Envelope } from "@tristate/core";
import type { ChildConfig, CrashPoint } from "../fixtures/crash-child.ts";

const DB_PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const FIXTURE = join(DB_PACKAGE_DIR, "test", "fixtures", "crash-child.ts");

/** A line the child printed on stdout. */
export type ChildLine =
  | { type: "ready"; pid: number }
  | { type: "envelope"; envelope: Envelope }
  | { type: "error"; message: string };

/** A running child executor process. */
export interface Child {
  readonly process: ChildProcess;
  /** Lines printed so far. */
  readonly lines: ChildLine[];
  /** Everything the child wrote on stderr (diagnostics). */
  stderr(): string;
  /** Resolves with the first line of this type (rejects if the child exits first). */
  next<T extends ChildLine["type"]>(type: T): Promise<Extract<ChildLine, { type: T }>>;
  /** Resolves when the child has exited, with its exit code or signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Writes `go` on its stdin. */
  go(): void;
  /** SIGKILLs the child if it still runs, and waits for it to exit. */
  kill(): Promise<void>;
}

/**
 * Starts `node --import tsx test/fixtures/crash-child.ts <point> <config>` with `packages/db` as the
 * working directory (where `tsx` resolves from), using the same Node binary as the test runner.
 */
export function spawnChild(point: CrashPoint, config: ChildConfig): Child {
  const proc = spawn(process.execPath, ["--import", "tsx", FIXTURE, point, JSON.stringify(config)], {
    cwd: DB_PACKAGE_DIR,
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, NODE_OPTIONS: "" },
  });
  const lines: ChildLine[] = [];
  const waiters: { type: string; resolve: (l: ChildLine) => void; reject: (e: Error) => void }[] = [];
  let stderrText = "";
  // The child's own error lines belong in every diagnostic.
  const stderr = () =>
    lines
      .filter((l) => l.type === "error")
      .map((l) => `[error] ${l.message}\n`)
      .join("") + stderrText;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  proc.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderrText += chunk;
  });
  createInterface({ input: proc.stdout! }).on("line", (text) => {
    let line: ChildLine;
    try {
      line = JSON.parse(text) as ChildLine;
    } catch {
      stderrText += `[stdout] ${text}\n`;
      return;
    }
    lines.push(line);
    for (const w of waiters.filter((w) => w.type === line.type)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(line);
    }
  });
  // Writing "go" to a child that died must not crash the test runner.
  proc.stdin!.on("error", () => {});
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once("exit", (code, signal) => {
      exit = { code, signal };
      // Let the last stdout lines be parsed before failing waiters.
      setImmediate(() => {
        for (const w of waiters.splice(0)) {
          w.reject(
            new Error(
              `child exited (code ${code}, signal ${signal}) before printing "${w.type}"; stderr:\n${stderr()}`,
            ),
          );
        }
        resolve({ code, signal });
      });
    });
  });
  return {
    process: proc,
    lines,
    stderr,
    next(type) {
      const seen = lines.find((l) => l.type === type);
      if (seen) return Promise.resolve(seen as never);
      if (exit)
        return Promise.reject(new Error(`child already exited before printing "${type}"; stderr:\n${stderr()}`));
      return new Promise((resolve, reject) => waiters.push({ type, resolve: resolve as never, reject }));
    },
    exited,
    go() {
      proc.stdin!.write("go\n");
    },
    async kill() {
      if (exit === null && proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGKILL");
        await exited;
      }
    },
  };
}

/** The shared cleanup stack of the test helpers (kill children, close pools and remotes, drop databases). */
export { Cleanup } from "@tristate/testing";

/** Waits until `condition()` holds, polling every `everyMs`; throws after `timeoutMs`. */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  { timeoutMs = 10_000, everyMs = 10 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Sleeps until the wall clock is past `epochMs` (a lease), and no longer. */
export async function sleepPast(epochMs: number): Promise<void> {
  const ms = epochMs - Date.now() + 1;
  if (ms > 0) await sleep(ms);
  while (Date.now() <= epochMs) await sleep(1);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
