import {
  type AuditEntry,
  checkTenant,
  DEFAULT_TENANT,
  type IntentRecord,
  OPERATOR_ACTIONS,
  type OperatorAction,
  type OperatorApplyResult,
  type OperatorChange,
  type OperatorStore,
  parseRecordedCompensation,
  storableValue,
} from "@tristate/core";
import { Prisma, type PrismaClient } from "./generated/prisma/client.ts";
import { RECORD_COLUMNS, type RecordRow, toIntentRecord } from "./intent-row.ts";
import { updateSql } from "./intent-sql.ts";
import { RUN_ABORT_ACTION } from "./queries/list-runs.ts";
import { CursorError } from "./queries/query-input.ts";
import { toolFilterPattern } from "./queries/tool-match.ts";
import {
  type AuditEntryRow,
  isRunAbortRow,
  type RunAbortAudit,
  type RunAbortAuditEntry,
  type RunAbortAuditResult,
  recordRunAbort,
  toRunAbortEntry,
} from "./run-abort-audit.ts";

/** Filters of {@link PrismaOperatorStore.listAudit}. */
export interface AuditQuery {
  /** Only this tenant's entries; absent: every tenant's (admins only: the API passes the caller's tenant). */
  tenant?: string;
  /** The acting key's name or id. */
  operator?: string;
  /** An operator action, or `abort_run` (operators' run aborts). */
  action?: AuditAction;
  /** Entries of tools whose name contains this text (case-insensitive). */
  tool?: string;
  /** Entries at or after, epoch ms. */
  fromEpochMs?: number;
  /** Entries before, epoch ms. */
  toEpochMs?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
  /** Page size. @default 50 */
  limit?: number;
}

/** An action of the audit: one of a record ({@link OPERATOR_ACTIONS}) or a run abort (`abort_run`). */
export type AuditAction = OperatorAction | typeof RUN_ABORT_ACTION;
/** Every {@link AuditAction}. */
export const AUDIT_ACTIONS: readonly AuditAction[] = [...OPERATOR_ACTIONS, RUN_ABORT_ACTION];

/** An entry of `audit.list`: an operator action on a record, or an operator's run abort. */
export type AuditListEntry = AuditEntry | RunAbortAuditEntry;

/** A page of audit entries, newest first. */
export interface AuditPage {
  entries: AuditListEntry[];
  /** Pass as `cursor` for the next (older) page; null at the end. */
  nextCursor: string | null;
}

/** A page of the human queue, oldest first. */
export interface QueuePage {
  records: IntentRecord[];
  /** Pass as `cursor` for the next page; null at the end. */
  nextCursor: string | null;
}

/** Thrown inside the transaction to roll it back when the audit row's unique id is taken. */
class DuplicateActionId extends Error {}

/** A record as a JSON snapshot for the audit table (`result` absent: none recorded). */
export function recordSnapshot(record: IntentRecord): Prisma.InputJsonObject {
  return storableValue(JSON.parse(JSON.stringify(record))) as Prisma.InputJsonObject;
}

/**
 * A snapshot back as a record. Snapshots written before a field existed lack it: `tenant` is then
 * `default` (before tenants), `sentKey` and `settlesAtEpochMs` null.
 * @throws TypeError naming the key when the snapshot's compensation is malformed.
 */
export function recordFromSnapshot(snapshot: unknown): IntentRecord {
  const s = snapshot as IntentRecord & Record<string, unknown>;
  return {
    ...s,
    tenant: s.tenant ?? DEFAULT_TENANT,
    sentKey: s.sentKey ?? null,
    settlesAtEpochMs: s.settlesAtEpochMs ?? null,
    compensation: parseRecordedCompensation(s.compensation, s.key),
    result: "result" in s ? s.result : undefined,
  };
}

type AuditRow = AuditEntryRow;

function toAuditEntry(row: AuditRow): AuditEntry {
  return {
    id: Number(row.id),
    tenant: row.tenant,
    operatorActionId: row.operatorActionId,
    actorKeyId: row.actorKeyId,
    actorName: row.actorName,
    atEpochMs: row.at.getTime(),
    action: row.action as OperatorAction,
    note: row.note,
    key: row.key,
    tool: row.tool,
    before: recordFromSnapshot(row.before),
    after: recordFromSnapshot(row.after),
  };
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002";
}

/**
 * The operator side of the intent log on PostgreSQL ({@link OperatorStore}): operator actions with
 * their audit rows in one interactive transaction, and the queries behind `queue.list` and
 * `audit.list`. A sibling of `PrismaIntentStore`, over the same Prisma client
 * (`new PrismaOperatorStore(store.prisma, tenant)`). Its actions concern only its tenant's records
 * and audit rows; its lists take the tenant as a filter.
 */
export class PrismaOperatorStore implements OperatorStore {
  readonly #prisma: PrismaClient;
  /** The tenant whose records this store's actions change (and whose audit rows they read). */
  readonly tenant: string;
  /**
   * @param tenant - @default "default"
   * @throws TypeError for a tenant name that breaks `TENANT_PATTERN`.
   */
  constructor(prisma: PrismaClient, tenant: string = DEFAULT_TENANT) {
    this.#prisma = prisma;
    this.tenant = checkTenant(tenant);
  }

  /**
   * @inheritdoc
   * One interactive transaction: `SELECT … FOR UPDATE` of the record (the before snapshot; a
   * concurrent action waits here and then sees the new version), the compare-and-set update, the
   * events, the audit row. The audit's unique `operator_action_id` settles identical requests: a
   * violation rolls everything back and the winner's row is returned as `duplicate`.
   * @throws when the database fails.
   */
  async applyOperatorAction(change: OperatorChange): Promise<OperatorApplyResult> {
    try {
      return await this.#prisma.$transaction(async (tx) => {
        const [row] = await tx.$queryRawUnsafe<RecordRow[]>(
          `SELECT ${RECORD_COLUMNS} FROM intent_records WHERE tenant = $1 AND key = $2 FOR UPDATE`,
          this.tenant,
          change.key,
        );
        const before = row ? toIntentRecord(row) : null;
        if (!before || before.version !== change.expectedVersion) {
          const prior = await tx.auditEntry.findUnique({
            where: {
              tenant_operatorActionId: { tenant: this.tenant, operatorActionId: change.audit.operatorActionId },
            },
          });
          if (prior) return { kind: "duplicate", audit: toAuditEntry(prior) };
          return { kind: "stale", current: before };
        }
        // The one compare-and-set write path (intent-sql.ts), events included, inside this transaction.
        const update = updateSql(
          this.tenant,
          change.key,
          change.expectedVersion,
          change.patch,
          change.events,
          change.nowEpochMs,
        );
        const [afterRow] = await tx.$queryRawUnsafe<RecordRow[]>(update.text, ...update.values);
        if (!afterRow) return { kind: "stale", current: before };
        const after = toIntentRecord(afterRow);
        let audit: AuditRow;
        try {
          audit = await tx.auditEntry.create({
            data: {
              tenant: this.tenant,
              ...change.audit,
              at: new Date(change.nowEpochMs),
              key: change.key,
              tool: before.tool,
              before: recordSnapshot(before),
              after: recordSnapshot(after),
            },
          });
        } catch (error) {
          if (isUniqueViolation(error)) throw new DuplicateActionId();
          throw error;
        }
        return { kind: "applied", record: after, audit: toAuditEntry(audit) };
      });
    } catch (error) {
      if (!(error instanceof DuplicateActionId || isUniqueViolation(error))) throw error;
      const winner = await this.findAudit(change.audit.operatorActionId);
      if (!winner) throw error;
      return { kind: "duplicate", audit: winner };
    }
  }

  /** @inheritdoc */
  async findAudit(operatorActionId: string): Promise<AuditEntry | null> {
    const row = await this.#prisma.auditEntry.findUnique({
      where: { tenant_operatorActionId: { tenant: this.tenant, operatorActionId } },
    });
    return row ? toAuditEntry(row) : null;
  }

  /** @inheritdoc */
  async latestAudit(key: string): Promise<AuditEntry | null> {
    const row = await this.#prisma.auditEntry.findFirst({
      where: { tenant: this.tenant, key },
      orderBy: { id: "desc" },
    });
    return row ? toAuditEntry(row) : null;
  }

  /**
   * Writes the audit row of an operator's run abort in this store's tenant, once per operatorActionId
   * (see `recordRunAbort` in run-abort-audit.ts).
   * @throws when the database fails.
   */
  recordRunAbort(audit: RunAbortAudit): Promise<RunAbortAuditResult> {
    return recordRunAbort(this.#prisma, this.tenant, audit);
  }

  /**
   * Audit entries (operator actions on records and operators' run aborts), newest first, filtered; cursor pagination by entry id.
   * `tool` matches tools whose name contains it (case-insensitive), as every list's tool filter.
   * @throws CursorError (a RangeError) when `cursor` is not one this method returned.
   */
  async listAudit(query: AuditQuery = {}): Promise<AuditPage> {
    const limit = query.limit ?? 50;
    if (query.action !== undefined && !(AUDIT_ACTIONS as readonly string[]).includes(query.action)) {
      throw new RangeError(`action must be one of ${AUDIT_ACTIONS.join(", ")}`);
    }
    let before: bigint | undefined;
    if (query.cursor !== undefined) {
      if (!/^[1-9][0-9]{0,18}$/.test(query.cursor)) throw new CursorError();
      before = BigInt(query.cursor);
    }
    const at: Prisma.DateTimeFilter = {};
    if (query.fromEpochMs !== undefined) at.gte = new Date(query.fromEpochMs);
    if (query.toEpochMs !== undefined) at.lt = new Date(query.toEpochMs);
    const rows = await this.#prisma.auditEntry.findMany({
      where: {
        ...(query.tenant !== undefined ? { tenant: query.tenant } : {}),
        ...(query.operator !== undefined
          ? { OR: [{ actorName: query.operator }, { actorKeyId: query.operator }] }
          : {}),
        ...(query.action !== undefined ? { action: query.action } : {}),
        // The tool filter of every list: a case-insensitive substring. Prisma's `contains` does not
        // escape LIKE wildcards: the pattern's escaped text (without its `%…%`) is passed.
        ...(query.tool !== undefined
          ? { tool: { contains: toolFilterPattern(query.tool).slice(1, -1), mode: "insensitive" as const } }
          : {}),
        ...(Object.keys(at).length ? { at } : {}),
        ...(before !== undefined ? { id: { lt: before } } : {}),
      },
      orderBy: { id: "desc" },
      take: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      entries: page.map((row) => (isRunAbortRow(row) ? toRunAbortEntry(row) : toAuditEntry(row))),
      nextCursor: rows.length > limit && page.length ? String(page[page.length - 1]?.id) : null,
    };
  }

  /**
   * Records in the human queue (`needs_human`), oldest first (by creation, then key); cursor pagination.
   * `tool` matches tools whose name contains it (case-insensitive; `%`, `_` are plain characters).
   * @throws CursorError (a RangeError) when `cursor` is not one this method returned.
   */
  async listNeedsHuman(
    query: { tenant?: string; tool?: string; cursor?: string; limit?: number } = {},
  ): Promise<QueuePage> {
    const limit = query.limit ?? 100;
    const values: unknown[] = [];
    const where: string[] = [];
    if (query.tenant !== undefined) {
      values.push(query.tenant);
      where.push(`tenant = $${values.length}`);
    }
    where.push("needs_human");
    if (query.tool !== undefined) {
      values.push(toolFilterPattern(query.tool));
      where.push(`tool ILIKE $${values.length}`);
    }
    if (query.cursor !== undefined) {
      const m = /^(\d{1,15})\.([0-9a-f]{32})$/.exec(query.cursor);
      if (!m) throw new CursorError();
      values.push(new Date(Number(m[1])), m[2]);
      where.push(`(created_at, key) > ($${values.length - 1}::timestamptz, $${values.length})`);
    }
    values.push(limit + 1);
    const rows = await this.#prisma.$queryRawUnsafe<RecordRow[]>(
      `SELECT ${RECORD_COLUMNS} FROM intent_records WHERE ${where.join(" AND ")}
       ORDER BY created_at, key LIMIT $${values.length}`,
      ...values,
    );
    const records = rows.slice(0, limit).map(toIntentRecord);
    const last = records[records.length - 1];
    return {
      records,
      nextCursor: rows.length > limit && last ? `${last.createdAtEpochMs}.${last.key}` : null,
    };
  }
}
