import type { Clock } from "./clock.ts";
import { isCompensationStep, parseRecordedCompensation } from "./compensation.ts";
import {
  type ClaimResult,
  type IntentEvent,
  type IntentPatch,
  type IntentRecord,
  type IntentStore,
  type LeasedRecord,
  legacyDeadline,
  type NewIntentRecord,
  type PlanStep,
  type StoredIntentEvent,
  type WriteOptions,
} from "./intent-store.ts";
import type { AuditEntry, OperatorApplyResult, OperatorChange, OperatorStore } from "./operator-store.ts";
import { type RunAbort, RunAbortedError, type RunAbortInput } from "./run-abort.ts";
import { checkTenant, DEFAULT_TENANT } from "./tenant.ts";

/** One tenant's part of a {@link MemoryIntentStore}. */
interface TenantPart {
  records: Map<string, IntentRecord>;
  events: StoredIntentEvent[];
  plans: Map<string, PlanStep[]>;
  audit: AuditEntry[];
  aborts: Map<string, RunAbort>;
}

/**
 * An in-memory {@link IntentStore} for unit tests only: it forgets everything when the process
 * ends, so it gives none of the guarantees of the durable intent log. Use `PrismaIntentStore`
 * from `@tristate/db` in anything real.
 */
export class MemoryIntentStore implements IntentStore, OperatorStore {
  /** The "database's" clock (rule 9), when given: it judges leases; else the writer's `nowEpochMs`. */
  readonly #clock: Clock | undefined;
  /** @inheritdoc */
  readonly tenant: string;
  /** This tenant's records by key, events, plans and audit rows (other tenants' live in `#all`). */
  readonly #records: Map<string, IntentRecord>;
  readonly #events: StoredIntentEvent[];
  readonly #plans: Map<string, PlanStep[]>;
  readonly #audit: AuditEntry[];
  readonly #aborts: Map<string, RunAbort>;
  /** Every tenant's part of the "database", shared by the views of {@link forTenant}. */
  readonly #all: Map<string, TenantPart>;
  readonly #ids: { nextEvent: number; nextAudit: number };

  /**
   * @param options.clock - the store's own clock, standing in for the database's `now()` (rule 9):
   *   when given, leases and staleness are judged by it and {@link clockEpochMs} reads it; tests of a
   *   replica with a skewed clock give the executor another one.
   * @param options.tenant - the tenant this view is confined to. @default "default"
   * @throws TypeError for a tenant name that breaks `TENANT_PATTERN`.
   */
  constructor(options: { clock?: Clock; tenant?: string } = {}, shared?: MemoryIntentStore) {
    this.#clock = shared ? shared.#clock : options.clock;
    this.tenant = checkTenant(options.tenant ?? DEFAULT_TENANT);
    this.#all = shared ? shared.#all : new Map();
    this.#ids = shared ? shared.#ids : { nextEvent: 1, nextAudit: 1 };
    let part = this.#all.get(this.tenant);
    if (!part) {
      part = { records: new Map(), events: [], plans: new Map(), audit: [], aborts: new Map() };
      this.#all.set(this.tenant, part);
    }
    this.#records = part.records;
    this.#events = part.events;
    this.#plans = part.plans;
    this.#audit = part.audit;
    this.#aborts = part.aborts;
    if (this.#clock) {
      const clock = this.#clock;
      this.clockEpochMs = async () => clock.nowEpochMs();
    }
  }

  /** A view of the same store confined to `tenant` (as `PrismaIntentStore.forTenant`). */
  forTenant(tenant: string): MemoryIntentStore {
    return new MemoryIntentStore({ tenant }, this);
  }

  /** @inheritdoc (only when constructed with a clock) */
  clockEpochMs?: () => Promise<number>;

  async claim(record: NewIntentRecord, events: IntentEvent[], nowEpochMs: number): Promise<ClaimResult> {
    if (record.tenant !== undefined && record.tenant !== this.tenant)
      throw new TypeError(`claim: record of tenant "${record.tenant}" in the store of tenant "${this.tenant}"`);
    const existing =
      this.#records.get(record.key) ??
      [...this.#records.values()].find(
        (r) => r.runId === record.runId && r.stepId === record.stepId && r.tool === record.tool,
      );
    if (existing) return { claimed: false, existing: structuredClone(existing) };
    const abort = this.#aborts.get(record.runId);
    if (abort && !isCompensationStep(record.stepId)) throw new RunAbortedError(structuredClone(abort));
    const full: IntentRecord = {
      ...structuredClone(record),
      // Checked as it is written (what the PostgreSQL store checks on read): a malformed one fails here.
      compensation: parseRecordedCompensation(record.compensation, record.key),
      tenant: this.tenant,
      status: "PENDING",
      version: 1,
      result: undefined,
      error: null,
      resolution: null,
      needsHuman: false,
      reconcileSweeps: 0,
      updatedAtEpochMs: nowEpochMs,
      finishedAtEpochMs: null,
      sentKey: null,
      settlesAtEpochMs: null,
      // A PENDING record is due for the sweeper when its lease ends.
      recheckAtEpochMs: record.leaseUntilEpochMs,
    };
    this.#records.set(record.key, full);
    this.#push(events);
    return { claimed: true, record: structuredClone(full) };
  }

  async get(key: string): Promise<IntentRecord | null> {
    const r = this.#records.get(key);
    return r ? structuredClone(r) : null;
  }

  async update(
    key: string,
    expectedVersion: number,
    patch: IntentPatch,
    events: IntentEvent[],
    nowEpochMs: number,
    options?: WriteOptions,
  ): Promise<IntentRecord | null> {
    if (options?.onlyIfLeaseExpired) {
      const r = this.#records.get(key);
      const now = this.#clock?.nowEpochMs() ?? nowEpochMs;
      if (!r || r.leaseUntilEpochMs >= now) return null;
    }
    return this.#update(key, expectedVersion, patch, events, nowEpochMs);
  }

  /** Synchronous compare-and-set (nothing can interleave). */
  #update(
    key: string,
    expectedVersion: number,
    patch: IntentPatch,
    events: IntentEvent[],
    nowEpochMs: number,
  ): IntentRecord | null {
    const r = this.#records.get(key);
    if (!r || r.version !== expectedVersion) return null;
    const next: IntentRecord = {
      ...r,
      ...structuredClone(patch),
      ...("compensation" in patch ? { compensation: parseRecordedCompensation(patch.compensation, key) } : {}),
      version: r.version + 1,
      updatedAtEpochMs: nowEpochMs,
    };
    if (!("result" in patch)) next.result = r.result;
    this.#records.set(key, next);
    this.#push(events);
    return structuredClone(next);
  }

  async appendEvents(events: IntentEvent[]): Promise<void> {
    this.#push(events);
  }

  async listEvents(key: string): Promise<StoredIntentEvent[]> {
    return this.#events.filter((e) => e.key === key).map((e) => structuredClone(e));
  }

  async claimStale(options: { nowEpochMs: number; limit: number; leaseUntilEpochMs: number }): Promise<LeasedRecord[]> {
    // As on PostgreSQL, the caller passes the store's clock (the sweeper reads `clockEpochMs`).
    const now = options.nowEpochMs;
    // Due (its re-check passed) and not leased; a record without a re-check is never taken. The
    // re-check stays as it was: the lease alone keeps other sweepers off.
    const due = [...this.#records.values()]
      .filter(
        (r) =>
          (r.status === "PENDING" || r.status === "UNKNOWN") &&
          r.recheckAtEpochMs !== null &&
          r.recheckAtEpochMs < now &&
          r.leaseUntilEpochMs < now,
      )
      .sort((a, b) => (a.recheckAtEpochMs as number) - (b.recheckAtEpochMs as number))
      .slice(0, options.limit);
    return due.map((r) => {
      const next: IntentRecord = {
        ...r,
        status: "UNKNOWN",
        leaseUntilEpochMs: options.leaseUntilEpochMs,
        settlesAtEpochMs:
          r.status === "PENDING" && r.settlesAtEpochMs !== null
            ? Math.max(r.settlesAtEpochMs, now + (r.settlesAtEpochMs - r.leaseUntilEpochMs))
            : r.settlesAtEpochMs,
        version: r.version + 1,
        updatedAtEpochMs: options.nowEpochMs,
      };
      this.#records.set(r.key, next);
      this.#push([
        {
          key: r.key,
          type: r.status === "PENDING" ? "lease_expired" : "sweep",
          atEpochMs: options.nowEpochMs,
          data: { previousStatus: r.status, previousDeadlineEpochMs: legacyDeadline(r) },
        },
      ]);
      return { ...structuredClone(next), previousStatus: r.status as "PENDING" | "UNKNOWN" };
    });
  }

  /** @inheritdoc */
  async applyOperatorAction(change: OperatorChange): Promise<OperatorApplyResult> {
    const prior = this.#audit.find((a) => a.operatorActionId === change.audit.operatorActionId);
    if (prior) return { kind: "duplicate", audit: structuredClone(prior) };
    const before = this.#records.get(change.key);
    if (!before || before.version !== change.expectedVersion) {
      return { kind: "stale", current: before ? structuredClone(before) : null };
    }
    // Synchronous from the look-up to the audit row: the whole action is atomic.
    const after = this.#update(change.key, change.expectedVersion, change.patch, change.events, change.nowEpochMs);
    if (!after) return { kind: "stale", current: structuredClone(before) };
    const entry: AuditEntry = {
      id: this.#ids.nextAudit++,
      tenant: this.tenant,
      ...change.audit,
      atEpochMs: change.nowEpochMs,
      key: change.key,
      tool: before.tool,
      before: structuredClone(before),
      after: structuredClone(after),
    };
    this.#audit.push(entry);
    return { kind: "applied", record: after, audit: structuredClone(entry) };
  }

  /** @inheritdoc */
  async findAudit(operatorActionId: string): Promise<AuditEntry | null> {
    const found = this.#audit.find((a) => a.operatorActionId === operatorActionId);
    return found ? structuredClone(found) : null;
  }

  /** @inheritdoc */
  async latestAudit(key: string): Promise<AuditEntry | null> {
    const found = this.#audit.findLast((a) => a.key === key);
    return found ? structuredClone(found) : null;
  }

  /** Every audit row, oldest first (tests). */
  async listAudit(): Promise<AuditEntry[]> {
    return this.#audit.map((a) => structuredClone(a));
  }

  /** @inheritdoc */
  async markRunAborted(runId: string, by: RunAbortInput): Promise<{ abort: RunAbort; first: boolean }> {
    const prior = this.#aborts.get(runId);
    if (prior) return { abort: structuredClone(prior), first: false };
    const abort: RunAbort = { ...by, runId, abortedAtEpochMs: this.#clock?.nowEpochMs() ?? Date.now() };
    this.#aborts.set(runId, abort);
    return { abort: structuredClone(abort), first: true };
  }

  /** @inheritdoc */
  async getRunAbort(runId: string): Promise<RunAbort | null> {
    const abort = this.#aborts.get(runId);
    return abort ? structuredClone(abort) : null;
  }

  /** @inheritdoc */
  async listUndoDue(options: {
    settledByEpochMs: number;
    limit: number;
    uncorrectableTools?: readonly string[];
  }): Promise<IntentRecord[]> {
    const aborts = [...this.#aborts.values()].sort((a, b) => a.abortedAtEpochMs - b.abortedAtEpochMs);
    const uncorrectable = new Set(options.uncorrectableTools ?? []);
    const askedToCorrect = (key: string) =>
      this.#events.some(
        (e) => e.key === key && e.type === "needs_human" && e.data.code === "IRREVERSIBLE_NEEDS_CORRECTION",
      );
    const due: IntentRecord[] = [];
    for (const abort of aborts) {
      for (const r of this.#records.values()) {
        if (r.runId !== abort.runId || r.status !== "SUCCEEDED" || r.needsHuman || isCompensationStep(r.stepId))
          continue;
        if (r.updatedAtEpochMs > options.settledByEpochMs) continue;
        const undoable = r.compensation !== null && !("key" in r.compensation);
        const forAPerson = r.compensation === null && uncorrectable.has(r.tool) && !askedToCorrect(r.key);
        if (undoable || forAPerson) due.push(structuredClone(r));
      }
    }
    return due.slice(0, options.limit);
  }

  async listByRun(runId: string): Promise<IntentRecord[]> {
    return [...this.#records.values()]
      .filter((r) => r.runId === runId)
      .sort((a, b) => a.createdAtEpochMs - b.createdAtEpochMs || (a.key < b.key ? -1 : 1))
      .map((r) => structuredClone(r));
  }

  async listByIdentity(
    tool: string,
    identity: Record<string, string>,
    sinceEpochMs: number,
    excludeKey: string,
  ): Promise<IntentRecord[]> {
    const wanted = JSON.stringify(Object.entries(identity).sort());
    return [...this.#records.values()]
      .filter(
        (r) =>
          r.tool === tool &&
          r.key !== excludeKey &&
          r.createdAtEpochMs >= sinceEpochMs &&
          JSON.stringify(Object.entries(r.identity).sort()) === wanted,
      )
      .map((r) => structuredClone(r));
  }

  async savePlan(runId: string, steps: PlanStep[]): Promise<void> {
    this.#plans.set(runId, structuredClone(steps));
  }

  async getPlan(runId: string): Promise<PlanStep[] | null> {
    const plan = this.#plans.get(runId);
    return plan ? structuredClone(plan) : null;
  }

  #push(events: IntentEvent[]): void {
    for (const e of events) this.#events.push({ ...structuredClone(e), id: this.#ids.nextEvent++ });
  }
}
