/**
 * A connection the server ends (`pg_terminate_backend`, a restart, `idle_in_transaction_session_timeout`)
 * emits `error` on its `pg` client. pg-pool listens only while a client is idle: one checked out —
 * held by Prisma's adapter for an interactive transaction, between two statements — has no listener,
 * and Node ends the process on an unhandled `error` event. The chaos campaign saw it (issue 21 run,
 * seed 2112: a replica exited on "terminating connection due to administrator command").
 * @module
 */
import type pg from "pg";

/**
 * Gives every client of `pool` a listener for `error` from the moment it connects, and the pool one
 * for idle clients: the error is not lost — the query in flight (or the holder's next one) fails with
 * it, and the pool drops the client when it is released with that error.
 */
export function survivePoolErrors(pool: pg.Pool): void {
  pool.on("error", () => {}); // an idle client's error only drops that client
  pool.on("connect", (client) => {
    client.on("error", () => {}); // a checked-out client's: its holder's next query fails instead
  });
}
