/**
 * Vacuuming where autovacuum does not run: the embedded PGlite database (one single-user session, no
 * autovacuum launcher), and the benchmarks on a test server configured with `autovacuum = off`.
 */

/** Runs one SQL text (a `pg` pool's or client's `query`). */
export type RunSql = (text: string) => Promise<{ rows: unknown[] }>;

/** Autovacuum's default trigger: dead rows above 50 + 20 % of the live ones (`autovacuum_vacuum_threshold`, `autovacuum_vacuum_scale_factor`). */
const DEAD_ROWS_SQL = `SELECT quote_ident(schemaname) || '.' || quote_ident(relname) AS name FROM pg_stat_user_tables
  WHERE n_dead_tup > 50 + 0.2 * n_live_tup ORDER BY n_dead_tup DESC`;

/**
 * What autovacuum would do now: `VACUUM ANALYZE` of each table whose dead rows exceed its default
 * threshold (50 + 20 % of the live rows). Every outcome write leaves a dead row (it changes indexed
 * columns), and without vacuuming the hot path slows as they pile up (measured: `executor.call` p50
 * 1.35 → 2.12 ms over 6,000 calls on PostgreSQL, 0.92 ms after a VACUUM; PGlite 2.3 → 1.6 ms).
 * This session's pending statistics are flushed first, so a single session (PGlite) sees its own
 * writes; on a server, other sessions' counts arrive within about a second.
 * @returns the tables vacuumed (schema-qualified).
 * @throws whatever the database throws.
 */
export async function vacuumDeadRows(query: RunSql): Promise<string[]> {
  await query("SELECT pg_stat_force_next_flush()").catch(() => {}); // PostgreSQL ≥ 15
  const { rows } = await query(DEAD_ROWS_SQL);
  const names = (rows as { name: string }[]).map((r) => r.name);
  for (const name of names) await query(`VACUUM ANALYZE ${name}`);
  return names;
}

/** A running vacuum loop: `stop()` ends it after the vacuum in progress. */
export interface VacuumLoop {
  stop(): Promise<void>;
}

/**
 * Runs {@link vacuumDeadRows} every `intervalMs` (autovacuum's `autovacuum_naptime` is 60 s), for a
 * database without autovacuum — the service starts it on the embedded database only. On PGlite a
 * VACUUM holds the one session: calls wait for it (a few ms per thousand dead rows), which is what
 * keeps the next thousands of calls from slowing down.
 * @param options.onError - called when a round throws (the loop goes on).
 */
export function startVacuumLoop(
  query: RunSql,
  options: {
    intervalMs?: number;
    onError?: (error: unknown) => void;
    /** Called after a round that vacuumed something: the tables, and how long the round held the database (ms). */
    onVacuum?: (tables: string[], durationMs: number) => void;
  } = {},
): VacuumLoop {
  const intervalMs = options.intervalMs ?? 60_000;
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (running) return;
    const started = performance.now();
    running = vacuumDeadRows(query)
      .then((tables) => {
        if (tables.length > 0) options.onVacuum?.(tables, Math.round(performance.now() - started));
      })
      .catch((error) => options.onError?.(error))
      .finally(() => {
        running = null;
      });
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
