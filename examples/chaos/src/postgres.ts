/**
 * The campaign's own PostgreSQL: a cluster created with `initdb` in a temporary folder, on a free
 * port, crashed with `pg_ctl stop -m immediate` (which loses `synchronous_commit = off` writes still
 * in the WAL buffers) and started again, and removed afterwards. Never the shared server.
 */
import { execFile } from "node:child_process";
import { appendFileSync, chmodSync, chownSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";

const run = promisify(execFile);

/** Where the PostgreSQL 15 binaries are (Debian's package). */
export const PG_BIN = process.env.TRISTATE_CHAOS_PG_BIN || "/usr/lib/postgresql/15/bin";

/** A free TCP port on loopback (the kernel's choice, released at once). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A running temporary cluster. */
export interface TempCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** `pg_ctl stop -m immediate`, then start again and wait until it accepts connections; ms down. */
  crash(): Promise<number>;
  /** `pg_terminate_backend` of every client connection but the campaign's own; how many. */
  terminateBackends(): Promise<number>;
  /** A pool of the campaign's own (application_name `tristate-chaos`, spared by `terminateBackends`). */
  readonly pool: pg.Pool;
  /** Stops the cluster (immediate) and removes its folder. */
  remove(): Promise<void>;
}

/** initdb/postgres refuse to run as root: run them as the `postgres` OS user then. */
function asPostgresUser(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

async function pgTool(tool: string, args: string[]): Promise<string> {
  const bin = join(PG_BIN, tool);
  const [cmd, argv] = asPostgresUser() ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  const { stdout } = await run(cmd, argv, { timeout: 60_000 });
  return stdout;
}

/**
 * Creates and starts a cluster in a fresh temporary folder (trust auth, loopback only, its socket
 * in that folder). `fsync` is off: the faults here kill processes, never the machine, so the page
 * cache survives and what PostgreSQL wrote survives; WAL not yet written is still lost.
 * @throws when `initdb` or `pg_ctl` fail (their output in the message).
 */
export async function createTempCluster(): Promise<TempCluster> {
  const dir = mkdtempSync(join(tmpdir(), "tristate-chaos-pg-"));
  const data = join(dir, "data");
  const log = join(dir, "postgres.log");
  if (asPostgresUser()) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  chmodSync(dir, 0o700);
  const port = await freePort();
  await pgTool("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-instructions"]);
  const conf = [
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${dir}'`,
    "fsync = off",
    "max_connections = 200",
    "shared_buffers = 64MB",
    "log_min_messages = fatal",
    "",
  ].join("\n");
  appendFileSync(join(data, "postgresql.conf"), conf);
  const start = () => pgTool("pg_ctl", ["start", "-D", data, "-w", "-t", "60", "-l", log, "-s"]);
  await start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const pool = new pg.Pool({ connectionString: url, max: 4, application_name: "tristate-chaos" });
  pool.on("error", () => {}); // idle clients die with every crash; the next query reconnects
  let removed = false;
  return {
    url,
    port,
    dir,
    pool,
    async crash() {
      const t0 = Date.now();
      await pgTool("pg_ctl", ["stop", "-D", data, "-m", "immediate", "-w", "-s"]);
      await start();
      return Date.now() - t0;
    },
    async terminateBackends() {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
          WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
            AND coalesce(application_name, '') <> 'tristate-chaos'`,
      );
      return rows[0]?.n ?? 0;
    },
    async remove() {
      if (removed) return;
      removed = true;
      await pool.end().catch(() => {});
      await pgTool("pg_ctl", ["stop", "-D", data, "-m", "immediate", "-w", "-s"]).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `query` until it succeeds (the cluster may be restarting), at most `timeoutMs`. */
export async function withRetry<T>(what: string, query: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await query();
    } catch (error) {
      if (Date.now() > end) throw new Error(`${what}: ${error instanceof Error ? error.message : String(error)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
