/**
 * The database-stall fault (issue 21 §1): a TCP proxy the campaign starts between every executor
 * replica and its PostgreSQL cluster, whose forwarding `dbstall` stops for 10–60 s with every
 * connection left open (a stalled database, a black-holed route: no error, no answer). The sweeper
 * process and the campaign's own queries (checker, settling, operator, `pgkill`) go to the cluster
 * directly, so they are never stalled.
 */
import { startTcpProxy, type TcpProxy } from "@tristate/testing/tcp-proxy";
import type { TempCluster } from "./postgres.ts";
import { ReplicaSet } from "./replicas.ts";

/** Shortest stall of one `dbstall` firing, ms. */
const DBSTALL_MIN_MS = 10_000;
/** Longest stall of one `dbstall` firing, ms (each is uniform in [min, max)). */
const DBSTALL_MAX_MS = 60_000;

/**
 * Under `--kills N`, `dbstall` needs min(N, this many firings per `--minutes`, at least 1) rather
 * than N: a stall lasts 35 s on average and stalls never overlap, so 50 of them take ~30 min, and
 * CI's `--minutes 8 --kills 50` must stay short. One firing per 2 minutes: 4 in CI's 8 minutes.
 */
export const DBSTALL_FIRINGS_PER_MINUTE = 0.5;

/** The firings of `kind` that `--kills N` asks for in `minutes` (N for every kind but `dbstall`). */
export function killsTarget(kind: string, kills: number, minutes: number): number {
  if (kind !== "dbstall") return kills;
  return Math.min(kills, Math.max(1, Math.floor(minutes * DBSTALL_FIRINGS_PER_MINUTE)));
}

/** A `dbstall` firing's length, ms, drawn from the campaign's RNG. */
export function drawStallMs(random: () => number): number {
  return Math.round(DBSTALL_MIN_MS + random() * (DBSTALL_MAX_MS - DBSTALL_MIN_MS));
}

/** The proxy and the sweeper process of a campaign. */
export interface DatabasePath {
  proxy: TcpProxy;
  /** `DATABASE_URL` of the replicas agents call: the cluster's, through the proxy. */
  proxiedUrl: string;
  /**
   * One executor process on the cluster's own URL that agents never call: its sweeper keeps
   * reconciling while the replicas' database is stalled. Faults do not kill it.
   */
  sweeper: ReplicaSet;
  close(): Promise<void>;
}

/**
 * Starts the proxy in front of `cluster` and prepares the sweeper process (started with
 * {@link startSweeper} once the replicas migrated the database).
 * @throws when the proxy's port cannot be bound.
 */
export async function openDatabasePath(cluster: TempCluster, sweeperPort: number): Promise<DatabasePath> {
  const proxy = await startTcpProxy({ targetPort: cluster.port });
  const proxiedUrl = cluster.url.replace(`:${cluster.port}/`, `:${proxy.port}/`);
  const sweeper = new ReplicaSet({ ports: [sweeperPort], env: {} });
  return {
    proxy,
    proxiedUrl,
    sweeper,
    async close() {
      proxy.resume();
      await sweeper.stopAll();
      await proxy.close();
    },
  };
}

/** Starts the sweeper process with the replicas' environment but the cluster's own URL. */
export async function startSweeper(
  path: DatabasePath,
  env: Record<string, string>,
  cluster: TempCluster,
): Promise<void> {
  path.sweeper.setEnv({ ...env, DATABASE_URL: cluster.url });
  const [process] = path.sweeper.replicas;
  if (process) await path.sweeper.start(process);
}
