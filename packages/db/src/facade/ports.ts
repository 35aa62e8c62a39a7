/**
 * The ports the service is typed to: what it needs of the database, with no PostgreSQL in the types.
 * `@tristate/core` defines the intent log's ports (`IntentStore`, `OperatorStore`); this file adds the
 * rest (keys, sessions, the operator side's lists, dashboard reads, upkeep) and {@link TristateDatabase},
 * the one object that hands them out. `openDatabase()` returns the PostgreSQL implementation; another
 * backend implements these interfaces.
 */
import type { IntentStore, OperatorStore } from "@tristate/core";
import type { z } from "zod";
import type { ApiKeyInfo, ApiKeyRole } from "../api-key-store.ts";
import type { SessionLimits } from "../dashboard-session-store.ts";
import type { NotificationOutbox, TenantNotifications } from "../notifications/ports.ts";
import type { AuditPage, AuditQuery, QueuePage } from "../operator-store.ts";
import type { IntentDetail } from "../queries/get-intent.ts";
import type { RunDetail } from "../queries/get-run.ts";
import type { IntentPage, listIntentsInput } from "../queries/list-intents.ts";
import type { listRunsInput, RunPage } from "../queries/list-runs.ts";
import type { listStaleInput, StaleList } from "../queries/list-stale.ts";
import type { NeedsHumanSummary } from "../queries/needs-human-summary.ts";
import type { OldestRecord } from "../queries/oldest-record.ts";
import type { IdentityPage, searchByIdentityInput } from "../queries/search-identity.ts";
import type { StatsOverview, statsOverviewInput } from "../queries/stats-overview.ts";
import type { ReadModelLoop, ReadModelLoopOptions } from "../rollups/read-model-loop.ts";
import type { RunAbortAudit, RunAbortAuditResult } from "../run-abort-audit.ts";
import type { VacuumLoop } from "../vacuum.ts";

/** API keys, stored hashed (the secret is shown once). Implemented by `ApiKeyStore`. */
export interface ApiKeys {
  /**
   * Creates a key. @returns its info and its secret (shown once, never stored).
   * @throws TypeError naming the field when `name`, `role` or `tenant` is invalid.
   */
  create(input: {
    name: string;
    role: ApiKeyRole;
    /** @default "default" */
    tenant?: string | undefined;
    /** Creation time, epoch ms. @default Date.now() */
    nowEpochMs?: number;
  }): Promise<{ info: ApiKeyInfo; secret: string }>;
  /** The valid (not revoked) key with this secret, or null. */
  verify(secret: string): Promise<ApiKeyInfo | null>;
  /** All keys, newest first. */
  list(): Promise<ApiKeyInfo[]>;
  /** Number of keys, revoked ones included. */
  count(): Promise<number>;
  /** Revokes a key and ends its dashboard sessions in one transaction (`nowEpochMs`: epoch ms). */
  revoke(id: string, nowEpochMs?: number): Promise<{ revoked: boolean; sessionsEnded: number }>;
  /** Tenants that have keys (`default` always included), sorted. */
  tenants(): Promise<string[]>;
}

/** The dashboard's sign-in sessions (times epoch ms). Implemented by `DashboardSessionStore`. */
export interface DashboardSessions {
  /** Opens a session for a (valid) key. @returns the session id (shown once) and its expiry. */
  create(
    keyId: string,
    limits: SessionLimits,
    nowEpochMs?: number,
  ): Promise<{ sessionId: string; expiresAtEpochMs: number }>;
  /** The key a session stands for, or null when it is unknown, expired, idle too long or its key revoked. */
  resolve(sessionId: string, limits: SessionLimits, nowEpochMs?: number): Promise<ApiKeyInfo | null>;
  /** Ends a session. @returns whether there was one. */
  end(sessionId: string): Promise<boolean>;
  /** Ends every session of a key. @returns how many. */
  endAllForKey(keyId: string): Promise<number>;
  /** Deletes sessions past their expiry or idle timeout. @returns how many. */
  purgeExpired(limits: SessionLimits, nowEpochMs?: number): Promise<number>;
}

/**
 * The operator side of one tenant's log: the core's {@link OperatorStore} (audited compare-and-set)
 * plus the audit list, the human queue and run-abort audit rows. Implemented by `PrismaOperatorStore`.
 */
export interface OperatorLog extends OperatorStore {
  /** The tenant it writes in. */
  readonly tenant: string;
  /** Writes the audit row of an operator's run abort in this tenant, once per operatorActionId. */
  recordRunAbort(audit: RunAbortAudit): Promise<RunAbortAuditResult>;
  /**
   * Audit entries, newest first, filtered (`query.tenant` absent: every tenant's).
   * @throws RangeError when `cursor` is not one this method returned, or `action` is unknown.
   */
  listAudit(query?: AuditQuery): Promise<AuditPage>;
  /**
   * Records in the human queue, oldest first (`query.tenant` absent: every tenant's; `limit` default 100).
   * @throws RangeError when `cursor` is not one this method returned.
   */
  listNeedsHuman(query?: { tenant?: string; tool?: string; cursor?: string; limit?: number }): Promise<QueuePage>;
}

/**
 * The operators' dashboard reads over one tenant's records, or every tenant's (see
 * {@link TristateDatabase.reads}). Each is the query of the same name in `src/queries/`.
 * @throws QueryInputError naming the field when an input is invalid.
 */
export interface DashboardReads {
  /** Reliability per tool over a window (`statsOverview`). */
  statsOverview(input: z.input<typeof statsOverviewInput>): Promise<StatsOverview>;
  /** A keyset page of records, newest first (`listIntents`). */
  listIntents(input?: z.input<typeof listIntentsInput>): Promise<IntentPage>;
  /** A keyset page of live and archived records whose identity holds a value (`searchByIdentity`). */
  searchByIdentity(input: z.input<typeof searchByIdentityInput>): Promise<IdentityPage>;
  /** One record with its timeline, or null (`getIntent`). */
  getIntent(key: string): Promise<IntentDetail | null>;
  /** A page of runs (`listRuns`); `nowEpochMs` is "now" for the default window. */
  listRuns(input?: z.input<typeof listRunsInput>, options?: { nowEpochMs?: number }): Promise<RunPage>;
  /** A run's records and plan, or null (`getRun`). */
  getRun(runId: string): Promise<RunDetail | null>;
  /** Stale PENDING records, oldest deadline first (`listStale`). */
  listStale(input: z.input<typeof listStaleInput>): Promise<StaleList>;
  /** The oldest record's creation, live or archived (`oldestRecord`): a few index probes. */
  oldestRecord(): Promise<OldestRecord>;
  /** The human queue's size and its oldest record (`needsHumanSummary`). */
  needsHumanSummary(): Promise<NeedsHumanSummary>;
}

/** How far the database's schema is: migrations applied against those this code ships. */
export interface MigrationStatus {
  /** Migrations finished and not rolled back in the database. */
  applied: number;
  /** Migrations in this package's migrations folder. */
  expected: number;
}

/**
 * The database as the service sees it: one object for the intent log (per tenant), the operator side
 * (per tenant), keys, sessions, dashboard reads and upkeep. Every tenant's views share one pool.
 */
export interface TristateDatabase {
  /** True when this is the embedded database (one session, no autovacuum). */
  readonly embedded: boolean;
  /**
   * The intent log confined to `tenant` (the executor's and sweeper's store).
   * @throws TypeError for a tenant name that breaks `TENANT_PATTERN`.
   */
  intents(tenant: string): IntentStore;
  /**
   * The operator side confined to `tenant` (made once per tenant).
   * @throws TypeError for a tenant name that breaks `TENANT_PATTERN`.
   */
  operators(tenant: string): OperatorLog;
  /** API keys. */
  readonly keys: ApiKeys;
  /** Dashboard sessions. */
  readonly sessions: DashboardSessions;
  /**
   * `tenant`'s notification channels and delivery log (issue 23 §3; made once per tenant).
   * @throws TypeError for a tenant name that breaks `TENANT_PATTERN`.
   */
  notifications(tenant: string): TenantNotifications;
  /** The notification outbox across tenants: fan-out, due deliveries, results, condition events. */
  readonly notificationOutbox: NotificationOutbox;
  /** Dashboard reads of `tenant`'s records; `undefined`: every tenant's (admins only). */
  reads(tenant: string | undefined): DashboardReads;
  /**
   * The tenant holding a record with this idempotency key (the first by name), or null: the one
   * look-up across tenants (keys are derived with the tenant, so at most one has it in practice).
   */
  tenantOfKey(key: string): Promise<string | null>;
  /** Migrations applied and expected (the readiness check). @throws when the database is unreachable. */
  migrationStatus(): Promise<MigrationStatus>;
  /**
   * What autovacuum would do now (`vacuumDeadRows`): `VACUUM ANALYZE` of each table past its threshold.
   * @returns the tables vacuumed. @throws whatever the database throws.
   */
  vacuum(): Promise<string[]>;
  /** Runs {@link TristateDatabase.vacuum} every `intervalMs` (default 60 000) until stopped (`startVacuumLoop`). */
  startVacuumLoop(options?: {
    intervalMs?: number;
    onError?: (error: unknown) => void;
    /** After a round that vacuumed something: the tables, and how long it held the database (ms). */
    onVacuum?: (tables: string[], durationMs: number) => void;
  }): VacuumLoop;
  /** The read side's background step (rollup refresh, archiving) until stopped (`startReadModelLoop`). */
  startReadModelLoop(options?: ReadModelLoopOptions): ReadModelLoop;
  /** The database's clock, epoch ms (rule 9). @throws when the database is unreachable. */
  clockEpochMs(): Promise<number>;
  /** Closes the pool (and, when embedded, stops the database). Idempotent. */
  close(): Promise<void>;
}
