import { DEFAULT_TENANT, type Executor, type IntentStore } from "@tristate/core";
import type { OperatorLog, TristateDatabase } from "@tristate/db";
import type { TristateMetrics } from "./metrics/index.ts";
import { countedExecutor, observedOperators, observedStore } from "./metrics/observe.ts";

/**
 * The service's tenants (issue 10): one tenant-confined view of the intent log, one executor and one
 * operator store per tenant, made on first use over the same pool. Every procedure reaches records
 * only through these, so every statement it runs is filtered by a tenant.
 */
export interface Tenants {
  /** The executor of `tenant` (its records, its keys: `idempotencyKey(…, tenant)`). */
  executor(tenant: string): Executor;
  /** The intent log confined to `tenant`. */
  store(tenant: string): IntentStore;
  /** The operator store (audit, human queue actions) confined to `tenant`. */
  operatorStore(tenant: string): OperatorLog;
  /** Every tenant that has keys, `default` included, sorted (the sweeper's rounds, the admin's filter). */
  list(): Promise<string[]>;
  /**
   * The tenant holding a record with this idempotency key, or null: the one look-up across tenants,
   * for admin keys (keys are derived with the tenant, so at most one tenant has it in practice).
   */
  tenantOfKey(key: string): Promise<string | null>;
  /**
   * Resolves when the outcome writes `tenant`'s executor (every tenant's when omitted) had in the
   * background when called have settled (see `Executor.outcomesWritten`): reads then show what
   * callers were already told. Never rejects.
   */
  outcomesWritten(tenant?: string): Promise<void>;
}

/**
 * Builds {@link Tenants} over the database's per-tenant views.
 * @param makeExecutor - creates the executor of one tenant's store (same catalog, probes, confirmations).
 * @param metrics - when given, every tenant's executor, intent store and operator store are counted
 *   (metrics/observe.ts: calls, UNKNOWN resolutions, compensations) — every path that answers a call
 *   or writes an outcome goes through them. Only catalog tools are counted.
 */
export function createTenants(
  db: TristateDatabase,
  makeExecutor: (store: IntentStore) => Executor,
  metrics?: { metrics: TristateMetrics; catalog: ReadonlySet<string> },
): Tenants {
  const executors = new Map<string, Executor>();
  const stores = new Map<string, IntentStore>();
  const operators = new Map<string, OperatorLog>();
  const counted = (tool: string) => metrics?.catalog.has(tool) ?? false;
  const made = (tenant: string) => {
    const executor = makeExecutor(tenants.store(tenant));
    return metrics ? countedExecutor(executor, tenant, metrics.metrics) : executor;
  };
  const tenants: Tenants = {
    store(tenant) {
      if (!metrics) return db.intents(tenant);
      let store = stores.get(tenant);
      if (!store) {
        store = observedStore(db.intents(tenant), tenant, metrics.metrics, counted);
        stores.set(tenant, store);
      }
      return store;
    },
    executor(tenant) {
      let executor = executors.get(tenant);
      if (!executor) {
        executor = made(tenant);
        executors.set(tenant, executor);
      }
      return executor;
    },
    operatorStore(tenant) {
      if (!metrics) return db.operators(tenant);
      let log = operators.get(tenant);
      if (!log) {
        log = observedOperators(db.operators(tenant), tenant, metrics.metrics, counted);
        operators.set(tenant, log);
      }
      return log;
    },
    list: () => db.keys.tenants(),
    tenantOfKey: (key) => db.tenantOfKey(key),
    async outcomesWritten(tenant) {
      if (tenant !== undefined) return executors.get(tenant)?.outcomesWritten();
      await Promise.all([...executors.values()].map((e) => e.outcomesWritten()));
    },
  };
  executors.set(DEFAULT_TENANT, made(DEFAULT_TENANT));
  return tenants;
}
