/**
 * In-memory τ-bench databases: collections of records (Python-faithful {@link PyDict}s) loaded from
 * the shared data, with copy-on-write records so a reset is cheap and the RFC 8785 state hash
 * (`state_hash_jcs`) only re-serialises the records a task touched.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import canonicalize from "canonicalize";
import { deepCopy, type PyDict, pyParse, toPlain } from "./py-json.ts";

/** The two τ-bench domains. */
export type DomainName = "retail" | "airline";

/** Collection names per domain, in data-file order. */
export const COLLECTIONS: Record<DomainName, readonly string[]> = {
  retail: ["orders", "products", "users"],
  airline: ["flights", "reservations", "users"],
};

/** One collection's initial records (shared, never mutated) and their cached canonical JSON. */
export interface BaseCollection {
  readonly records: ReadonlyMap<string, PyDict>;
  readonly sortedIds: readonly string[];
}

/** The immutable initial state of a domain, from which every fresh database is derived. */
export interface BaseDatabase {
  readonly domain: DomainName;
  readonly collections: Readonly<Record<string, BaseCollection>>;
}

const canonicalCache = new WeakMap<PyDict, string>();

function canonicalRecord(rec: PyDict, cache: boolean): string {
  const hit = cache ? canonicalCache.get(rec) : undefined;
  if (hit !== undefined) return hit;
  const text = canonicalize(toPlain(rec)) as string;
  if (cache) canonicalCache.set(rec, text);
  return text;
}

/**
 * A collection of records keyed by id. Reads share the initial records; {@link Collection.mut}
 * clones a record before its first change in this database (so the initial state is never touched).
 */
export class Collection {
  private readonly records: Map<string, PyDict>;
  private readonly owned = new Set<string>();

  constructor(private readonly base: BaseCollection) {
    this.records = new Map(base.records);
  }

  /** The record (read-only use), or undefined. */
  get(id: string): PyDict | undefined {
    return this.records.get(id);
  }

  /** True when the id exists. */
  has(id: string): boolean {
    return this.records.has(id);
  }

  /** The record for writing (cloned on first write), or undefined. */
  mut(id: string): PyDict | undefined {
    const rec = this.records.get(id);
    if (rec === undefined || this.owned.has(id)) return rec;
    const copy = deepCopy(rec);
    this.records.set(id, copy);
    this.owned.add(id);
    return copy;
  }

  /** Stores a record (appended when new, in place when the id exists). */
  set(id: string, rec: PyDict): void {
    this.records.set(id, rec);
    this.owned.add(id);
  }

  /** Records in insertion order. */
  values(): IterableIterator<PyDict> {
    return this.records.values();
  }

  /** [id, record] pairs in insertion order. */
  entries(): IterableIterator<[string, PyDict]> {
    return this.records.entries();
  }

  /** Number of records. */
  get size(): number {
    return this.records.size;
  }

  /** Canonical JSON (RFC 8785) of the collection object. */
  canonical(): string {
    let ids: readonly string[] = this.base.sortedIds;
    if (this.records.size !== this.base.records.size) ids = [...this.records.keys()].sort();
    const parts: string[] = [];
    for (const id of ids) {
      const rec = this.records.get(id) as PyDict;
      parts.push(`${JSON.stringify(id)}:${canonicalRecord(rec, !this.owned.has(id))}`);
    }
    return `{${parts.join(",")}}`;
  }
}

/** A live database: one {@link Collection} per collection name. */
export interface Database {
  readonly domain: DomainName;
  readonly collections: Readonly<Record<string, Collection>>;
}

/** Reads a domain's initial state from the shared data directory (BEHAVIOUR.md §1.1). */
export function loadBaseDatabase(dataDir: string, domain: DomainName): BaseDatabase {
  const collections: Record<string, BaseCollection> = {};
  for (const name of COLLECTIONS[domain]) {
    const parsed = pyParse(readFileSync(join(dataDir, domain, `${name}.json`), "utf8"));
    if (!(parsed instanceof Map)) throw new Error(`${domain}/${name}.json is not an object`);
    const records = new Map<string, PyDict>();
    for (const [id, rec] of parsed) {
      if (!(rec instanceof Map)) throw new Error(`${domain}/${name}.json: record ${id} is not an object`);
      records.set(id, rec);
    }
    collections[name] = { records, sortedIds: [...records.keys()].sort() };
  }
  return { domain, collections };
}

/** A fresh database over the initial state (O(number of records); records are shared until written). */
export function freshDatabase(base: BaseDatabase): Database {
  const collections: Record<string, Collection> = {};
  for (const [name, c] of Object.entries(base.collections)) collections[name] = new Collection(c);
  return { domain: base.domain, collections };
}

/** `state_hash_jcs`: lowercase hex SHA-256 of the RFC 8785 canonical JSON of the whole database. */
export function stateHashJcs(db: Database): string {
  const h = createHash("sha256");
  const names = Object.keys(db.collections).sort();
  h.update("{");
  names.forEach((name, k) => {
    h.update(`${k === 0 ? "" : ","}${JSON.stringify(name)}:`);
    h.update((db.collections[name] as Collection).canonical(), "utf8");
  });
  h.update("}");
  return h.digest("hex");
}

/** The retail collections, typed. */
export interface RetailDb {
  orders: Collection;
  products: Collection;
  users: Collection;
}

/** The airline collections, typed. */
export interface AirlineDb {
  flights: Collection;
  reservations: Collection;
  users: Collection;
}

/** Typed view of a retail database. */
export function retailView(db: Database): RetailDb {
  const c = db.collections;
  return { orders: c.orders as Collection, products: c.products as Collection, users: c.users as Collection };
}

/** Typed view of an airline database. */
export function airlineView(db: Database): AirlineDb {
  const c = db.collections;
  return { flights: c.flights as Collection, reservations: c.reservations as Collection, users: c.users as Collection };
}
