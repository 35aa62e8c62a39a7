/**
 * Which database failures are transient: the server or the connection went away, or is briefly
 * refusing work, and the same statement would succeed on a new connection in a moment. The service
 * answers them 503 with `Retry-After` (never 500), and retries its start-up migrations on them.
 * Sources: PostgreSQL's SQLSTATE classes (Appendix A: class 08 connection exception, 57P01–57P03
 * operator intervention, 53300 too many connections, 40001/40P01 serialization failure and deadlock,
 * rolled back and safe to repeat), node-postgres's and Prisma's messages for a connection lost
 * mid-statement, and Prisma's codes P1001/P1002/P1017/P2024.
 *
 * The pool's time limits (pool-timeouts.ts) are transient too: 57014 (`statement_timeout` — the
 * server cancelled and rolled back the statement), 25P03 (`idle_in_transaction_session_timeout`),
 * pg-pool's "timeout exceeded when trying to connect", and pg's client-side "Query read timeout"
 * (the server could not be heard: whether a write landed is unknown, so only statements that are safe
 * to repeat — the store's claims and compare-and-set writes are — may be repeated on it).
 */

const TRANSIENT_SQLSTATES = new Set(["57P01", "57P02", "57P03", "57P05", "57014", "25P03", "53300", "40001", "40P01"]);
const TRANSIENT_NODE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN"]);
const TRANSIENT_PRISMA_CODES = new Set(["P1001", "P1002", "P1017", "P2024"]);
const TRANSIENT_MESSAGES = [
  /Connection terminated/i,
  /terminating connection/i,
  /server closed the connection/i,
  /Server has closed the connection/i,
  /Client has encountered a connection error/i,
  /timeout exceeded when trying to connect/i,
  /Query read timeout/i,
  /canceling statement due to statement timeout/i,
  /idle-in-transaction timeout/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
  /is not currently accepting connections/i,
  /Can't reach database server/i,
  /Connection refused/i,
];

/**
 * True when `error` (or anything in its `cause` chain, `AggregateError.errors` included) is a
 * transient database failure: the statement was not applied or was rolled back with its
 * transaction, and repeating it on a new connection may succeed. Never throws.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const link = queue.shift();
    if (link === null || link === undefined || seen.has(link) || seen.size > 20) continue;
    seen.add(link);
    if (typeof link !== "object") continue;
    const e = link as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown; originalCode?: unknown };
    const code = typeof e.code === "string" ? e.code : undefined;
    const sqlstate = typeof e.originalCode === "string" ? e.originalCode : code;
    if (sqlstate && (TRANSIENT_SQLSTATES.has(sqlstate) || sqlstate.startsWith("08"))) return true;
    if (code && (TRANSIENT_NODE_CODES.has(code) || TRANSIENT_PRISMA_CODES.has(code))) return true;
    if (typeof e.message === "string" && TRANSIENT_MESSAGES.some((re) => re.test(e.message as string))) return true;
    queue.push(e.cause);
    if (Array.isArray(e.errors)) queue.push(...e.errors);
  }
  return false;
}
