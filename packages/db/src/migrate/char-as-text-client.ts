import { ColumnTypeEnum, type SqlDriverAdapter, type SqlQueryable } from "@prisma/driver-adapter-utils";
import pg from "pg";

/** PostgreSQL's internal single-byte `"char"` type (e.g. `pg_constraint.contype`). */
const CHAR_OID = 18;
const TEXT_OID = 25;
/** Appended to a `"char"` column's name by the client, removed again by {@link withCharColumns}. */
const CHAR_MARK = "\u0000char";

type Fields = { fields?: { dataTypeID: number; name: string }[] };

function markChar<T>(result: T): T {
  for (const r of Array.isArray(result) ? (result as Fields[]) : [result as Fields]) {
    for (const field of r?.fields ?? []) {
      if (field.dataTypeID !== CHAR_OID) continue;
      field.dataTypeID = TEXT_OID;
      field.name += CHAR_MARK;
    }
  }
  return result;
}

/**
 * A `pg.Client` that lets `"char"` columns through `@prisma/adapter-pg` 7.10, which refuses them
 * ("Column type 'char' could not be deserialized"): it reports them as text with a marked name, and
 * {@link withCharColumns} restores the name and types them `Character`, as the schema engine's
 * catalog queries (`pg_constraint.contype`) expect. Used only for the schema engine's connections.
 */
export class CharAsTextClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: pg's query has a dozen overloads; this wrapper forwards them all.
  override query(...args: any[]): any {
    const last = args.at(-1);
    if (typeof last === "function") {
      args[args.length - 1] = (error: Error | null, result: unknown) => last(error, error ? result : markChar(result));
      return (super.query as (...a: unknown[]) => unknown)(...args);
    }
    const out = (super.query as (...a: unknown[]) => unknown)(...args);
    return out instanceof Promise ? out.then(markChar) : out;
  }
}

function patchQueryable<T extends SqlQueryable>(queryable: T): T {
  const queryRaw = queryable.queryRaw.bind(queryable);
  queryable.queryRaw = async (query) => {
    const result = await queryRaw(query);
    result.columnNames.forEach((name, i) => {
      if (!name.endsWith(CHAR_MARK)) return;
      result.columnNames[i] = name.slice(0, -CHAR_MARK.length);
      result.columnTypes[i] = ColumnTypeEnum.Character;
    });
    return result;
  };
  return queryable;
}

/** Restores the `"char"` columns marked by {@link CharAsTextClient} in an adapter's results. */
export function withCharColumns(adapter: SqlDriverAdapter): SqlDriverAdapter {
  patchQueryable(adapter);
  const startTransaction = adapter.startTransaction.bind(adapter);
  adapter.startTransaction = async (isolationLevel) => patchQueryable(await startTransaction(isolationLevel));
  return adapter;
}
