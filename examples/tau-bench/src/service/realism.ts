/**
 * Remote-system realism, configurable per write tool: whether the service honours `Idempotency-Key`,
 * whether keyed calls can be looked up by key, whether effects can be looked up by business identity,
 * and an artificial processing latency.
 */
import type { DomainName } from "../domain/database.ts";
import { TOOLS } from "../domain/tools.ts";

/** Realism settings of one tool. */
export interface ToolRealism {
  /** Honours `Idempotency-Key`: replays the first response, 409 while in flight, 422 on a different body. */
  idempotencyKey: boolean;
  /** `GET /<domain>/lookup/by-key/<key>` reports this tool's keyed calls (needs `idempotencyKey`). */
  keyLookup: boolean;
  /** `GET /<domain>/lookup/<tool>?<identity>&since=` reports this tool's effects. */
  identityLookup: boolean;
  /** Delay before doing the work (the key is "in flight" meanwhile). */
  latencyMs: number;
}

/**
 * Business identity of each write tool: the arguments a lookup must name (any other scalar argument
 * may be added as a filter). The recorded effect carries the changed record (order, user, reservation).
 */
export const IDENTITY_FIELDS: Record<DomainName, Record<string, readonly string[]>> = {
  retail: {
    cancel_pending_order: ["order_id"],
    exchange_delivered_order_items: ["order_id"],
    modify_pending_order_address: ["order_id"],
    modify_pending_order_items: ["order_id"],
    modify_pending_order_payment: ["order_id"],
    modify_user_address: ["user_id"],
    return_delivered_order_items: ["order_id"],
  },
  airline: {
    book_reservation: ["user_id"],
    cancel_reservation: ["reservation_id"],
    send_certificate: ["user_id"],
    update_reservation_baggages: ["reservation_id"],
    update_reservation_flights: ["reservation_id"],
    update_reservation_passengers: ["reservation_id"],
  },
};

const ALL: ToolRealism = { idempotencyKey: true, keyLookup: true, identityLookup: true, latencyMs: 0 };
const NONE: ToolRealism = { idempotencyKey: false, keyLookup: false, identityLookup: false, latencyMs: 0 };
const KEYED: ToolRealism = { idempotencyKey: true, keyLookup: true, identityLookup: false, latencyMs: 0 };
const IDENTITY: ToolRealism = { idempotencyKey: false, keyLookup: false, identityLookup: true, latencyMs: 0 };

/**
 * The default "mixed" profile: some tools honour keys, some only offer business-identity lookups, and
 * airline `send_certificate` offers neither (no probe is possible: an ambiguous outcome needs a human).
 */
export const MIXED_PROFILE: Record<DomainName, Record<string, ToolRealism>> = {
  retail: {
    cancel_pending_order: ALL,
    exchange_delivered_order_items: ALL,
    modify_pending_order_items: ALL,
    return_delivered_order_items: IDENTITY,
    modify_pending_order_payment: IDENTITY,
    modify_pending_order_address: IDENTITY,
    modify_user_address: IDENTITY,
  },
  airline: {
    book_reservation: ALL,
    cancel_reservation: IDENTITY,
    update_reservation_flights: KEYED,
    update_reservation_baggages: IDENTITY,
    update_reservation_passengers: IDENTITY,
    send_certificate: NONE,
  },
};

/** Named profiles: `mixed` (default), `full` (everything offered), `none` (nothing offered). */
export type RealismProfile = "mixed" | "full" | "none";

/** Per-tool overrides keyed `<domain>.<tool>`. */
export type RealismOverrides = Record<string, Partial<ToolRealism>>;

/** Resolved realism table: domain → write tool → settings. */
export type RealismTable = Record<DomainName, Record<string, ToolRealism>>;

/** Builds the realism table from a profile and overrides (unknown tools throw). */
export function resolveRealism(profile: RealismProfile = "mixed", overrides: RealismOverrides = {}): RealismTable {
  const table = { retail: {}, airline: {} } as RealismTable;
  for (const domain of ["retail", "airline"] as const) {
    for (const tool of TOOLS[domain].values()) {
      if (tool.kind !== "write") continue;
      const base = profile === "full" ? ALL : profile === "none" ? NONE : (MIXED_PROFILE[domain][tool.name] ?? NONE);
      table[domain][tool.name] = { ...base };
    }
  }
  for (const [name, o] of Object.entries(overrides)) {
    const [domain, tool] = name.split(".") as [DomainName, string];
    const entry = table[domain]?.[tool];
    if (!entry) throw new Error(`unknown write tool ${name}`);
    Object.assign(entry, o);
  }
  for (const d of Object.values(table)) for (const r of Object.values(d)) if (!r.idempotencyKey) r.keyLookup = false;
  return table;
}

/**
 * Parses a CLI override `retail.send_certificate=key,key-lookup,identity-lookup,latency=50`
 * (`none` clears all three capabilities).
 */
export function parseRealismOverride(text: string): [string, Partial<ToolRealism>] {
  const eq = text.indexOf("=");
  if (eq < 0) throw new Error(`bad --tool value ${text} (expected <domain>.<tool>=<flags>)`);
  const name = text.slice(0, eq);
  const o: Partial<ToolRealism> = { idempotencyKey: false, keyLookup: false, identityLookup: false };
  for (const flag of text
    .slice(eq + 1)
    .split(",")
    .filter(Boolean)) {
    if (flag === "key") o.idempotencyKey = true;
    else if (flag === "key-lookup") o.keyLookup = true;
    else if (flag === "identity-lookup") o.identityLookup = true;
    else if (flag === "none") continue;
    else if (flag.startsWith("latency=")) o.latencyMs = Number(flag.slice(8));
    else throw new Error(`bad --tool flag ${flag}`);
  }
  return [name, o];
}
