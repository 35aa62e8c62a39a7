/**
 * The package's only reader of `process.env`. `TAU_BENCH_DATA_DIR` (default `examples/tau-bench/data`,
 * the copy this repository carries: MIT, © 2024 Sierra, see its `LICENSE-tau-bench.txt`) is resolved
 * from the repository root, never from the current directory; the data is read in place.
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (this file lives in `examples/tau-bench/src/`). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/** Default of `TAU_BENCH_DATA_DIR`, relative to the repository root: the copy in this repository. */
export const DEFAULT_TAU_BENCH_DATA_DIR = "examples/tau-bench/data";

/** Absolute path of the τ-bench data directory (`TAU_BENCH_DATA_DIR`, resolved from the repo root). */
export function tauBenchDataDir(): string {
  return resolve(REPO_ROOT, process.env.TAU_BENCH_DATA_DIR || DEFAULT_TAU_BENCH_DATA_DIR);
}

/** True when the data directory holds both domains. */
export function tauBenchDataPresent(dir: string = tauBenchDataDir()): boolean {
  return existsSync(join(dir, "retail", "orders.json")) && existsSync(join(dir, "airline", "flights.json"));
}

/** `DATABASE_URL`: the PostgreSQL the replay's executor uses when set (else a test or embedded database). */
export function databaseUrlSetting(): string | undefined {
  return process.env.DATABASE_URL || undefined;
}

/** The directory the command was started from (`INIT_CWD` under pnpm/npm scripts, else the cwd). */
export function invocationDir(): string {
  return process.env.INIT_CWD || process.cwd();
}
