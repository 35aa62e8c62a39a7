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
 * Sends this process SIGTERM when any process that started it (tsx, the script's shell, the pnpm
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
