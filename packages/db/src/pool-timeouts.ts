/**
 * Time limits of the service's PostgreSQL pool (issue 21 §1): without them a database that stops
 * answering (a stalled proxy, a partition that keeps the TCP connection open) holds every query, and
 * every call waiting on one, for as long as the kernel keeps the socket — minutes.
 *
 * - `connectionTimeoutMillis` bounds opening a connection and waiting for a free one of the pool
 *   (pg-pool: "timeout exceeded when trying to connect").
 * - `statement_timeout` (server side) cancels a statement that runs too long; the server rolls it
 *   back and answers SQLSTATE 57014, so the client knows it was not applied.
 * - `query_timeout` (client side) gives up on a query whose answer never arrives (the server cannot be
 *   heard); it is a little longer than `statement_timeout`, so the server's cancel wins when it can
 *   be heard. The pool then drops that connection ("Query read timeout").
 * - `idle_in_transaction_session_timeout` (server side) ends a session left inside a transaction
 *   (its locks with it), e.g. one whose client went away mid-transaction.
 * - TCP keep-alive notices a peer that vanished without closing.
 *
 * Each is classified as a transient database failure (transient.ts): 503 with `Retry-After`.
 */
import type pg from "pg";

/** Time limits of a PostgreSQL pool. */
export interface DatabaseTimeouts {
  /** Opening a connection, or waiting for a free one of the pool, ms. @default 5000 */
  connectTimeoutMs: number;
  /**
   * One statement on the server, ms (`statement_timeout`); the client gives up
   * {@link QUERY_TIMEOUT_MARGIN_MS} later (`query_timeout`). @default 30000
   */
  statementTimeoutMs: number;
  /** A session idle inside a transaction is ended after this long, ms. @default 60000 */
  idleInTransactionTimeoutMs: number;
}

/** The defaults of {@link DatabaseTimeouts}. */
export const DEFAULT_DATABASE_TIMEOUTS: Readonly<DatabaseTimeouts> = Object.freeze({
  connectTimeoutMs: 5000,
  statementTimeoutMs: 30_000,
  idleInTransactionTimeoutMs: 60_000,
});

/** How much longer than `statement_timeout` the client waits for an answer (`query_timeout`), ms. */
export const QUERY_TIMEOUT_MARGIN_MS = 2000;

/** First TCP keep-alive probe after this long idle, ms. */
const KEEP_ALIVE_INITIAL_DELAY_MS = 10_000;

/**
 * The `pg.Pool` settings for `timeouts`.
 * @param serverSide false for a server that takes no startup parameters beyond the basics (the
 *   embedded PGlite's one session): only the client-side limits are set.
 * @throws RangeError naming the field when a limit is not a positive finite number of ms.
 */
export function poolTimeoutConfig(timeouts: DatabaseTimeouts, serverSide = true): pg.PoolConfig {
  for (const [field, value] of Object.entries(timeouts)) {
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
      throw new RangeError(`database timeouts: ${field} must be a positive number of ms, got ${String(value)}`);
    }
  }
  return {
    connectionTimeoutMillis: timeouts.connectTimeoutMs,
    query_timeout: timeouts.statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEP_ALIVE_INITIAL_DELAY_MS,
    ...(serverSide
      ? {
          statement_timeout: timeouts.statementTimeoutMs,
          idle_in_transaction_session_timeout: timeouts.idleInTransactionTimeoutMs,
        }
      : {}),
  };
}
