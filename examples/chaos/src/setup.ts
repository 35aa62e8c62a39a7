/**
 * The campaign's executors: the replicas agents call (their database through the stall proxy), the
 * sweeper process on the cluster's own URL, and the API keys of the agents and the operator.
 */
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { ApiKeyStore, createPrismaIntentStore } from "@tristate/db";
import { type DatabasePath, startSweeper } from "./db-stall.ts";
import type { CampaignOptions } from "./options.ts";
import type { TempCluster } from "./postgres.ts";
import type { ReplicaSet } from "./replicas.ts";

const CATALOG = resolve(import.meta.dirname, "catalog.config.ts");

/** The remote's fault timing the catalog declares settle windows for (`TRISTATE_CHAOS_TIMING`). */
function remoteTiming(options: CampaignOptions) {
  return {
    rate: Math.max(options.baseFaults.rate, options.lagFaults.rate),
    mix: { ...options.baseFaults.mix, lag: 1 },
    lagMs: Math.max(options.baseFaults.lagMs, options.lagFaults.lagMs),
  };
}

/**
 * Starts every replica (the first one migrates the empty database) and the sweeper process, and
 * creates the keys; resolves to their secrets.
 */
export async function startExecutors(
  options: CampaignOptions,
  cluster: TempCluster,
  database: DatabasePath,
  replicas: ReplicaSet,
  serviceUrl: string,
): Promise<{ agentKey: string; adminKey: string }> {
  const env = {
    DATABASE_URL: database.proxiedUrl,
    TRISTATE_CONFIG: options.catalog ?? CATALOG,
    TRISTATE_CHAOS_SERVICE_URL: serviceUrl,
    TRISTATE_CHAOS_TIMING: JSON.stringify(remoteTiming(options)),
    TRISTATE_SWEEP_INTERVAL_MS: String(options.sweepIntervalMs),
    TRISTATE_CONFIRMATION_SECRET: randomBytes(24).toString("hex"),
    TRISTATE_SHUTDOWN_GRACE_MS: "0",
  };
  replicas.setEnv(env);
  const [first, ...others] = replicas.replicas;
  if (first) await replicas.start(first); // the first one migrates the empty database
  await Promise.all([...others.map((r) => replicas.start(r)), startSweeper(database, env, cluster)]);
  const store = createPrismaIntentStore({ databaseUrl: cluster.url });
  const keys = new ApiKeyStore(store.prisma);
  const agentKey = (await keys.create({ name: "chaos agent", role: "agent" })).secret;
  const adminKey = (await keys.create({ name: "chaos operator", role: "admin" })).secret;
  await store.close();
  return { agentKey, adminKey };
}
