/**
 * The service's memory of write requests: the idempotency-key store (responses kept for a retention
 * period) and the effect log behind the lookups (entries become visible at `visibleAt`, which the
 * `lag` fault pushes into the future).
 */

/** One idempotency-key record. */
export interface KeyEntry {
  key: string;
  tool: string;
  fingerprint: string;
  args: unknown;
  state: "in_flight" | "done";
  output?: string | null;
  startedAt: number;
  completedAt?: number;
  visibleAt?: number;
  expiresAt?: number;
}

/** What {@link IdempotencyStore.begin} decided for a request. */
export type KeyDecision =
  | { kind: "new"; entry: KeyEntry }
  | { kind: "in_flight"; entry: KeyEntry }
  | { kind: "mismatch"; entry: KeyEntry }
  | { kind: "replay"; entry: KeyEntry };

/** Idempotency keys of one service instance. */
export class IdempotencyStore {
  private readonly entries = new Map<string, KeyEntry>();

  constructor(private readonly retentionMs: number) {}

  private live(key: string, now: number): KeyEntry | undefined {
    const e = this.entries.get(key);
    if (e?.expiresAt !== undefined && e.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }

  /** Reserves `key` for a new request, or says why it cannot run (in flight, different body, replay). */
  begin(key: string, tool: string, fingerprint: string, args: unknown, now: number): KeyDecision {
    const e = this.live(key, now);
    if (e) {
      if (e.state === "in_flight") return { kind: "in_flight", entry: e };
      return e.fingerprint === fingerprint && e.tool === tool
        ? { kind: "replay", entry: e }
        : { kind: "mismatch", entry: e };
    }
    const entry: KeyEntry = { key, tool, fingerprint, args, state: "in_flight", startedAt: now };
    this.entries.set(key, entry);
    return { kind: "new", entry };
  }

  /** Records the response of a reserved key. */
  complete(entry: KeyEntry, output: string | null, now: number, visibleAt: number): void {
    entry.state = "done";
    entry.output = output;
    entry.completedAt = now;
    entry.visibleAt = visibleAt;
    entry.expiresAt = now + this.retentionMs;
  }

  /** Forgets a reserved key whose request did no work. */
  abandon(entry: KeyEntry): void {
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
  }

  /** The live entry for a key, if any. */
  get(key: string, now: number): KeyEntry | undefined {
    return this.live(key, now);
  }
}

/** One recorded effect of a write tool. */
export interface Effect {
  seq: number;
  tool: string;
  args: Record<string, unknown>;
  output: string;
  /** The changed record (order, user or reservation) as returned by the tool, when it returns one. */
  record?: unknown;
  key?: string;
  at: number;
  visibleAt: number;
}

/** Effects of one service instance, in order. */
export class EffectLog {
  private readonly effects: Effect[] = [];

  /** Appends an effect. */
  add(e: Omit<Effect, "seq">): Effect {
    const effect = { ...e, seq: this.effects.length + 1 };
    this.effects.push(effect);
    return effect;
  }

  /** Every effect, visible or not, oldest first (for scoring: the remote's own ground truth). */
  all(): readonly Effect[] {
    return this.effects;
  }

  /** Visible effects of `tool` at or after `since` whose arguments match every filter (oldest first). */
  find(tool: string, filters: Record<string, string>, since: number, now: number): Effect[] {
    return this.effects.filter(
      (e) =>
        e.tool === tool &&
        e.at >= since &&
        e.visibleAt <= now &&
        Object.entries(filters).every(([k, v]) => scalarMatches(e.args[k], v)),
    );
  }
}

/** One tool request as it arrived (before any injected fault): what the `Request-Deadline` check reads. */
export interface RequestArrival {
  tool: string;
  /** `write` or `read`. */
  kind: "write" | "read";
  /** When the request reached the service, epoch ms (the service's clock). */
  at: number;
  /** Its `Request-Deadline` header, epoch ms; null when absent or not a number. */
  deadlineEpochMs: number | null;
  /** Its `Idempotency-Key` header, if any. */
  key?: string;
}

/** True when a scalar argument equals a query value (numbers compared numerically). */
export function scalarMatches(arg: unknown, query: string): boolean {
  if (typeof arg === "number") return query.trim() !== "" && Number(query) === arg;
  return scalarText(arg) === query;
}

/** Text form of a scalar argument for query matching (undefined for lists and objects). */
export function scalarText(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return undefined;
}
