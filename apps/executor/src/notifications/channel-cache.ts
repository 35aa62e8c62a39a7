/**
 * Whether a tenant has an enabled channel receiving `human_queue` events, cached per tenant (issue 23
 * §3): the envelope of a record waiting for a person says "an operator has been notified" only then.
 * The envelope is built synchronously on a call's path, so it reads the cached answer and never a
 * query: a reading older than {@link CHANNEL_CACHE_MS} is refreshed in the background, and a channel
 * change made on this replica refreshes it at once ({@link channelsChanged}). Another replica's change
 * is seen within {@link CHANNEL_CACHE_MS}. A tenant not read yet answers false (never a claim of a
 * notification that is not known to be queued).
 */
import type { TristateDatabase } from "@tristate/db";

/** How long a reading of a tenant's channels is used before it is refreshed, ms. */
export const CHANNEL_CACHE_MS = 5_000;

interface Entry {
  value: boolean;
  /** When it was read, `performance.now()` ms; -Infinity while the first read is under way. */
  readAtMs: number;
  refreshing: Promise<void> | null;
  /** Bumped by {@link channelsChanged}: a read started before a change does not overwrite a later one. */
  generation: number;
}

type Db = Pick<TristateDatabase, "notifications">;

/** Per database (several services may run in one test process), per tenant. */
const caches = new WeakMap<Db, Map<string, Entry>>();

function entryOf(db: Db, tenant: string): Entry {
  let byTenant = caches.get(db);
  if (!byTenant) {
    byTenant = new Map();
    caches.set(db, byTenant);
  }
  let entry = byTenant.get(tenant);
  if (!entry) {
    entry = { value: false, readAtMs: Number.NEGATIVE_INFINITY, refreshing: null, generation: 0 };
    byTenant.set(tenant, entry);
  }
  return entry;
}

function refresh(db: Db, tenant: string, entry: Entry): Promise<void> {
  if (entry.refreshing) return entry.refreshing;
  const generation = entry.generation;
  const reading: Promise<void> = db
    .notifications(tenant)
    .hasChannelFor("human_queue")
    .then(
      (value) => {
        if (entry.generation !== generation) return;
        entry.value = value;
        entry.readAtMs = performance.now();
      },
      // A failed read keeps the last answer; the next envelope tries again.
      () => {},
    )
    .finally(() => {
      if (entry.refreshing === reading) entry.refreshing = null;
    });
  entry.refreshing = reading;
  return reading;
}

/**
 * The cached answer for `tenant` (false until first read), starting a background refresh when it is
 * older than {@link CHANNEL_CACHE_MS}. Never throws, never waits.
 */
export function humanQueueNotified(db: Db, tenant: string): boolean {
  const entry = entryOf(db, tenant);
  if (performance.now() - entry.readAtMs > CHANNEL_CACHE_MS) void refresh(db, tenant, entry);
  return entry.value;
}

/** Reads `tenant`'s answer now (at start, for a new tenant's executor). Never rejects. */
export function primeChannelCache(db: Db, tenant: string): Promise<void> {
  return refresh(db, tenant, entryOf(db, tenant));
}

/**
 * A channel of `tenant` was created, changed or deleted on this replica: read again at once.
 * Resolves when read (the procedure answers after it, so this replica's next envelope says it). Never rejects.
 */
export function channelsChanged(db: Db, tenant: string): Promise<void> {
  const entry = entryOf(db, tenant);
  entry.generation += 1;
  entry.readAtMs = Number.NEGATIVE_INFINITY;
  entry.refreshing = null;
  return refresh(db, tenant, entry);
}
