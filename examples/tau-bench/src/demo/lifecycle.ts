/**
 * What `pnpm demo` owns and gives back: its own embedded database folder (never `npm start`'s), the
 * keys it created (revoked at exit), and its life tied to the command that started it (a SIGTERM to
 * `pnpm demo` that pnpm does not pass on still stops the demo and its dashboard).
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");

/**
 * The demo's embedded database folder: `TRISTATE_DATA_DIR` when set, else `.tristate/demo-pgdata` at
 * the repository root (apart from `npm start`'s `.tristate/pgdata`, so catalogs never mix).
 */
export function demoDataDir(): string {
  return process.env.TRISTATE_DATA_DIR || join(root, ".tristate", "demo-pgdata");
}

/** The key operations the demo needs (the executor's `ApiKeyStore`). */
export interface KeyRevoker {
  verify(secret: string): Promise<{ id: string } | null>;
  revoke(id: string): Promise<{ revoked: boolean }>;
}

/** Revokes the keys with these secrets (the demo's agent and admin keys); answers how many were revoked. */
export async function revokeKeys(keys: KeyRevoker, secrets: readonly (string | null)[]): Promise<number> {
  let revoked = 0;
  for (const secret of secrets) {
    if (!secret) continue;
    const info = await keys.verify(secret);
    if (info && (await keys.revoke(info.id)).revoked) revoked++;
  }
  return revoked;
}

/** The parent of `pid` (Linux `/proc`), or null when unknown. */
function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[1]);
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Sends this process SIGTERM when any process that started it (the script's shell, the pnpm
 * processes, up to the first process) is gone, checked every `everyMs`. pnpm does not always pass a
 * SIGTERM on to its script: without this the demo kept running after `pnpm demo` was stopped.
 */
export function stopWhenStarterExits(everyMs = 500): void {
  const chain: number[] = [];
  let pid = process.ppid;
  for (let i = 0; i < 16 && pid > 1; i++) {
    chain.push(pid);
    const parent = parentOf(pid);
    if (parent === null) break;
    pid = parent;
  }
  const watched = chain;
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent || watched.some((p) => !alive(p))) process.kill(process.pid, "SIGTERM");
  }, everyMs).unref();
}

/**
 * Resolves at the first SIGINT (Ctrl-C) or SIGTERM, and keeps both signals handled afterwards: a
 * terminal's Ctrl-C reaches every process of the group (pnpm, tsx, the demo, the dashboard), tsx
 * relays it once more and {@link stopWhenStarterExits} sends SIGTERM when pnpm is gone — without a
 * handler, that second signal killed the demo halfway through stopping its children, so it exited
 * by a signal and pnpm printed "Command failed". Later signals only say that the demo is stopping.
 * @returns the signal that asked the demo to stop.
 */
export function stopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      resolve(signal);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
}

/**
 * Runs `close` (stopping the demo's children and revoking its keys), then ends the process: exit
 * code 0 when everything stopped, 1 when closing failed or took longer than `graceMs` (nothing is
 * left running either way: the process ends). `pnpm demo` then ends as the demo did.
 */
export async function closeAndExit(close: () => Promise<void>, graceMs = 30_000): Promise<never> {
  const timer = setTimeout(() => {
    console.error(`the demo did not stop within ${graceMs / 1000} s; exiting anyway`);
    process.exit(1);
  }, graceMs);
  timer.unref();
  try {
    await close();
    process.exit(0);
  } catch (error) {
    console.error(`stopping the demo failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
