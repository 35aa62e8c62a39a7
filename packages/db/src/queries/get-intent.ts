import type { IntentEventType, JsonObject } from "@tristate/core";
import { z } from "zod";
import { Prisma, type PrismaClient } from "../generated/prisma/client.ts";
import { RECORD_COLUMNS, type RecordRow, toIntentRecord } from "../intent-row.ts";
import { type ArgsRedactor, type IntentDetailRecord, type TenantScope, toIntentDetail } from "./intent-view.ts";
import { parseQueryInput } from "./query-input.ts";

/** One entry of a record's timeline as the read API shows it. */
export interface TimelineEvent {
  /** The event's sequence number (a PostgreSQL bigint), as a decimal string. */
  id: string;
  type: IntentEventType;
  /** Epoch ms. */
  atEpochMs: number;
  /** Detail, e.g. `{ outcome, code, durationMs }` or `{ probe, answer }`. */
  data: JsonObject;
}

/** Result of {@link getIntent}. */
export interface IntentDetail {
  record: IntentDetailRecord;
  /** Oldest first. */
  events: TimelineEvent[];
}

/** Input of {@link getIntent}: an idempotency key. */
export const intentKeySchema = z.string().min(1, "must not be empty").max(200, "must be at most 200 characters");

/**
 * The intent record for `key` (all columns, the result too) and its event timeline, oldest first; a
 * record moved to the archive (past retention: `archiveIntents`) is found there, on its primary key.
 * @param options.redact - rewrites the record's args (masking; issue 5), default none.
 * @param options.tenant - only this tenant's record ({@link TenantScope}); keys are derived with the
 *   tenant, so without it at most one tenant has the key in practice (the first by tenant is taken).
 * @returns null when no record (of the tenant) has this key.
 * @throws QueryInputError (field `key`) when the key is empty or too long.
 */
export async function getIntent(
  prisma: PrismaClient,
  key: string,
  options: { redact?: ArgsRedactor } & TenantScope = {},
): Promise<IntentDetail | null> {
  parseQueryInput(z.object({ key: intentKeySchema }), { key });
  // Raw SQL tells a SQL NULL result (none recorded) from a JSON null one; the typed client cannot.
  const tenantFilter = options.tenant !== undefined ? Prisma.sql`tenant = ${options.tenant} AND ` : Prisma.empty;
  const find = (table: string) =>
    prisma.$queryRaw<RecordRow[]>(
      Prisma.sql`SELECT ${Prisma.raw(RECORD_COLUMNS)} FROM ${Prisma.raw(table)} WHERE ${tenantFilter}key = ${key}
        ORDER BY tenant LIMIT 1`,
    );
  // The hot table first; a record past retention lives in the archive with its timeline (`archiveIntents`).
  let row = (await find("intent_records"))[0];
  const archived = !row;
  if (!row) row = (await find("intent_records_archive"))[0];
  if (!row) return null;
  const where = { where: { tenant: row.tenant, key }, orderBy: { id: "asc" } } as const;
  const events = archived ? await prisma.intentEventArchive.findMany(where) : await prisma.intentEvent.findMany(where);
  return {
    record: toIntentDetail(toIntentRecord(row), options.redact),
    events: events.map((e) => ({
      id: e.id.toString(),
      type: e.type,
      atEpochMs: e.at.getTime(),
      data: e.data as JsonObject,
    })),
  };
}
