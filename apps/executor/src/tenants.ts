import { DEFAULT_TENANT, type Executor, type IntentStore } from "@tristate/core";
import type { OperatorLog, TristateDatabase } from "@tristate/db";

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
 */
export function createTenants(db: TristateDatabase, makeExecutor: (store: IntentStore) => Executor): Tenants {
  const executors = new Map<string, Executor>();
  const tenants: Tenants = {
    store: (tenant) => db.intents(tenant),
    executor(tenant) {
      let executor = executors.get(tenant);
      if (!executor) {
        executor = makeExecutor(tenants.store(tenant));
        executors.set(tenant, executor);
      }
      return executor;
    },
    operatorStore: (tenant) => db.operators(tenant),
    list: () => db.keys.tenants(),
    tenantOfKey: (key) => db.tenantOfKey(key),
    async outcomesWritten(tenant) {
      if (tenant !== undefined) return executors.get(tenant)?.outcomesWritten();
      await Promise.all([...executors.values()].map((e) => e.outcomesWritten()));
    },
  };
  executors.set(DEFAULT_TENANT, makeExecutor(db.intents(DEFAULT_TENANT)));
  return tenants;
}
