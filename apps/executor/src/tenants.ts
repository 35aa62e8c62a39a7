import { DEFAULT_TENANT, type Executor } from "@tristate/core";
import { type ApiKeyStore, type PrismaIntentStore, PrismaOperatorStore } from "@tristate/db";

/**
 * The service's tenants (issue 10): one tenant-confined view of the intent log, one executor and one
 * operator store per tenant, made on first use over the same pool. Every procedure reaches records
 * only through these, so every statement it runs is filtered by a tenant.
 */
export interface Tenants {
  /** The executor of `tenant` (its records, its keys: `idempotencyKey(…, tenant)`). */
  executor(tenant: string): Executor;
  /** The intent log confined to `tenant`. */
  store(tenant: string): PrismaIntentStore;
  /** The operator store (audit, human queue actions) confined to `tenant`. */
  operatorStore(tenant: string): PrismaOperatorStore;
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
 * Builds {@link Tenants} over the `default` store.
 * @param makeExecutor - creates the executor of one tenant's store (same catalog, probes, confirmations).
 */
export function createTenants(
  base: PrismaIntentStore,
  makeExecutor: (store: PrismaIntentStore) => Executor,
  keys: ApiKeyStore,
): Tenants {
  const executors = new Map<string, Executor>();
  const operatorStores = new Map<string, PrismaOperatorStore>();
  const tenants: Tenants = {
    store: (tenant) => base.forTenant(tenant),
    executor(tenant) {
      let executor = executors.get(tenant);
      if (!executor) {
        executor = makeExecutor(tenants.store(tenant));
        executors.set(tenant, executor);
      }
      return executor;
    },
    operatorStore(tenant) {
      let store = operatorStores.get(tenant);
      if (!store) {
        store = new PrismaOperatorStore(base.prisma, tenant);
        operatorStores.set(tenant, store);
      }
      return store;
    },
    list: () => keys.tenants(),
    async tenantOfKey(key) {
      const { rows } = await base.pool.query<{ tenant: string }>(
        "SELECT tenant FROM intent_records WHERE key = $1 ORDER BY tenant LIMIT 1",
        [key],
      );
      return rows[0]?.tenant ?? null;
    },
    async outcomesWritten(tenant) {
      if (tenant !== undefined) return executors.get(tenant)?.outcomesWritten();
      await Promise.all([...executors.values()].map((e) => e.outcomesWritten()));
    },
  };
  executors.set(base.tenant, makeExecutor(base));
  if (base.tenant !== DEFAULT_TENANT) throw new TypeError("createTenants: the base store must be the default tenant's");
  return tenants;
}
