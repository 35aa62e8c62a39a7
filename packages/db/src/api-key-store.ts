import { createHash, randomBytes, randomUUID } from "node:crypto";
import { checkTenant, DEFAULT_TENANT } from "@tristate/core";
import type { PrismaClient } from "./generated/prisma/client.ts";

/** Roles of API keys: agents call tools; viewers read; operators also resolve; admins also manage keys. */
export const API_KEY_ROLES = ["agent", "viewer", "operator", "admin"] as const;
/** One of {@link API_KEY_ROLES}. */
export type ApiKeyRole = (typeof API_KEY_ROLES)[number];

/** A key as listed (never its secret). */
export interface ApiKeyInfo {
  id: string;
  name: string;
  role: ApiKeyRole;
  /**
   * The tenant whose records the key reads and acts on (`default` when made without one). Admin keys
   * act on every tenant; their own tenant is where they act when a request names none.
   */
  tenant: string;
  /**
   * First characters of the secret, to recognise it: `ts_<role>_` and the first
   * {@link KEY_PREFIX_SECRET_CHARS} characters of its random part (keys made before that show only
   * `ts_<role>_` plus what fitted in 12 characters; they still verify).
   */
  prefix: string;
  /** Epoch ms. */
  createdAtEpochMs: number;
  /** Epoch ms, or null. */
  lastUsedAtEpochMs: number | null;
  /** Epoch ms, or null while the key is valid. */
  revokedAtEpochMs: number | null;
}

/**
 * Characters of a secret's random part kept as its listed prefix: 8 base64url characters (48 of its
 * 256 bits) tell keys apart, and the 208 bits left unshown keep it unguessable.
 */
export const KEY_PREFIX_SECRET_CHARS = 8;

/** The listed prefix of a secret `ts_<role>_<random>`: the role part and {@link KEY_PREFIX_SECRET_CHARS} characters. */
export function apiKeyPrefix(secret: string, role: ApiKeyRole): string {
  return secret.slice(0, `ts_${role}_`.length + KEY_PREFIX_SECRET_CHARS);
}

/** SHA-256 hex of a secret. Keys are 256-bit random, so a fast hash is enough (no password stretching). */
export function hashApiKey(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/**
 * API keys stored hashed (only the SHA-256 of the secret is kept; the secret is shown once).
 * Secrets look like `ts_<role>_<43 base64url characters>`.
 */
export class ApiKeyStore {
  readonly #prisma: PrismaClient;
  constructor(prisma: PrismaClient) {
    this.#prisma = prisma;
  }

  /**
   * Creates a key. @returns the key's info and its secret (shown once, never stored).
   * @param input.tenant - @default "default" (`DEFAULT_TENANT`).
   * @throws TypeError naming the field when `name`, `role` or `tenant` is invalid.
   */
  async create(input: {
    name: string;
    role: ApiKeyRole;
    tenant?: string | undefined;
    nowEpochMs?: number;
  }): Promise<{ info: ApiKeyInfo; secret: string }> {
    const tenant = checkTenant(input.tenant ?? DEFAULT_TENANT);
    if (typeof input.name !== "string" || input.name.trim() === "" || input.name.length > 100) {
      throw new TypeError("name must be a non-empty string of at most 100 characters");
    }
    if (!(API_KEY_ROLES as readonly string[]).includes(input.role)) {
      throw new TypeError(`role must be one of ${API_KEY_ROLES.join(", ")}`);
    }
    const secret = `ts_${input.role}_${randomBytes(32).toString("base64url")}`;
    const row = await this.#prisma.apiKey.create({
      data: {
        id: randomUUID(),
        name: input.name.trim(),
        role: input.role,
        tenant,
        hash: hashApiKey(secret),
        prefix: apiKeyPrefix(secret, input.role),
        createdAt: new Date(input.nowEpochMs ?? Date.now()),
      },
    });
    return { info: toApiKeyInfo(row), secret };
  }

  /** The valid (not revoked) key with this secret, or null. Records its last use (at most once a minute). */
  async verify(secret: string): Promise<ApiKeyInfo | null> {
    if (typeof secret !== "string" || secret.length < 10 || secret.length > 200) return null;
    const row = await this.#prisma.apiKey.findUnique({ where: { hash: hashApiKey(secret) } });
    if (!row || row.revokedAt) return null;
    const now = Date.now();
    if (!row.lastUsedAt || now - row.lastUsedAt.getTime() > 60_000) {
      await this.#prisma.apiKey.update({ where: { id: row.id }, data: { lastUsedAt: new Date(now) } });
    }
    return toApiKeyInfo(row);
  }

  /** All keys, newest first. */
  async list(): Promise<ApiKeyInfo[]> {
    return (await this.#prisma.apiKey.findMany({ orderBy: { createdAt: "desc" } })).map(toApiKeyInfo);
  }

  /** Number of keys, revoked ones included. */
  async count(): Promise<number> {
    return this.#prisma.apiKey.count();
  }

  /**
   * Revokes a key and, in the same transaction, ends its dashboard sessions (however it is revoked:
   * API or CLI). @returns `revoked: false` when no valid key has this id; `sessionsEnded` ended.
   * @throws TypeError when `id` is not a non-empty string (Prisma drops an undefined filter: every
   *   key would be revoked).
   */
  async revoke(id: string, nowEpochMs: number = Date.now()): Promise<{ revoked: boolean; sessionsEnded: number }> {
    requireId("id", id);
    const [res, ended] = await this.#prisma.$transaction([
      this.#prisma.apiKey.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: new Date(nowEpochMs) } }),
      this.#prisma.dashboardSession.deleteMany({ where: { keyId: id } }),
    ]);
    return { revoked: res.count === 1, sessionsEnded: ended.count };
  }

  /** Tenants that have keys (`default` always included), sorted: the admin's tenant filter. */
  async tenants(): Promise<string[]> {
    const rows = await this.#prisma.apiKey.findMany({ distinct: ["tenant"], select: { tenant: true } });
    return [...new Set([DEFAULT_TENANT, ...rows.map((r) => r.tenant)])].sort();
  }
}

/** An `api_keys` row as the port's {@link ApiKeyInfo} (times in epoch ms); the one mapper of key rows. */
export function toApiKeyInfo(row: {
  id: string;
  name: string;
  role: string;
  tenant: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}): ApiKeyInfo {
  return {
    id: row.id,
    name: row.name,
    role: row.role as ApiKeyRole,
    tenant: row.tenant,
    prefix: row.prefix,
    createdAtEpochMs: row.createdAt.getTime(),
    lastUsedAtEpochMs: row.lastUsedAt?.getTime() ?? null,
    revokedAtEpochMs: row.revokedAt?.getTime() ?? null,
  };
}

/**
 * Refuses an id that is not a non-empty string before it reaches a Prisma filter, where `undefined`
 * means "no condition" and a write would touch every row.
 * @throws TypeError naming the field.
 */
export function requireId(field: string, value: unknown): asserts value is string {
  if (typeof value !== "string" || value === "") throw new TypeError(`${field}: must be a non-empty string`);
}
