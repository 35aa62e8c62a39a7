import { randomBytes, randomUUID } from "node:crypto";
import { type ApiKeyInfo, hashApiKey, requireId, toApiKeyInfo } from "./api-key-store.ts";
import type { PrismaClient } from "./generated/prisma/client.ts";

/** How long sessions live: an absolute lifetime and an idle timeout, both ms. */
export interface SessionLimits {
  /** From sign-in to the end, whatever the use. */
  ttlMs: number;
  /** Longest pause between two uses. */
  idleMs: number;
}

/** Session ids look like `tss_<43 base64url characters>` (256 random bits). */
const SESSION_ID = /^tss_[A-Za-z0-9_-]{43}$/;

/** SHA-256 hex of a session id (256 random bits: a fast hash is enough, as for keys). */
export function hashSessionId(sessionId: string): string {
  return hashApiKey(sessionId);
}

/**
 * Dashboard sessions, owned by the executor: the browser holds only the random session id; the table
 * keeps its SHA-256, the key it stands for, and its expiry. A session is valid while it is younger than
 * `ttlMs`, was used within `idleMs`, and its key is not revoked.
 */
export class DashboardSessionStore {
  readonly #prisma: PrismaClient;
  constructor(prisma: PrismaClient) {
    this.#prisma = prisma;
  }

  /** Opens a session for a (valid) key. @returns the session id (shown once, never stored) and its expiry. */
  async create(
    keyId: string,
    limits: SessionLimits,
    nowEpochMs: number = Date.now(),
  ): Promise<{ sessionId: string; expiresAtEpochMs: number }> {
    const sessionId = `tss_${randomBytes(32).toString("base64url")}`;
    const expiresAtEpochMs = nowEpochMs + limits.ttlMs;
    await this.#prisma.dashboardSession.create({
      data: {
        id: randomUUID(),
        hash: hashSessionId(sessionId),
        keyId,
        createdAt: new Date(nowEpochMs),
        lastSeenAt: new Date(nowEpochMs),
        expiresAt: new Date(expiresAtEpochMs),
      },
    });
    return { sessionId, expiresAtEpochMs };
  }

  /**
   * The key a session stands for, or null when the id is unknown, expired, idle too long, or its key
   * is revoked (an expired or idle session is deleted). Records the use (at most once per
   * min(idleMs / 10, 60 s), so a busy page does not write on every call).
   */
  async resolve(sessionId: string, limits: SessionLimits, nowEpochMs: number = Date.now()): Promise<ApiKeyInfo | null> {
    if (typeof sessionId !== "string" || !SESSION_ID.test(sessionId)) return null;
    const row = await this.#prisma.dashboardSession.findUnique({
      where: { hash: hashSessionId(sessionId) },
      include: { key: true },
    });
    if (!row) return null;
    const lastSeen = row.lastSeenAt.getTime();
    if (row.expiresAt.getTime() <= nowEpochMs || lastSeen + limits.idleMs <= nowEpochMs || row.key.revokedAt) {
      await this.#prisma.dashboardSession.deleteMany({ where: { id: row.id } });
      return null;
    }
    if (nowEpochMs - lastSeen >= Math.min(limits.idleMs / 10, 60_000)) {
      await this.#prisma.dashboardSession.updateMany({
        where: { id: row.id },
        data: { lastSeenAt: new Date(nowEpochMs) },
      });
    }
    return toApiKeyInfo(row.key);
  }

  /** Ends a session (sign-out). @returns whether there was one to end. */
  async end(sessionId: string): Promise<boolean> {
    if (typeof sessionId !== "string" || !SESSION_ID.test(sessionId)) return false;
    const res = await this.#prisma.dashboardSession.deleteMany({ where: { hash: hashSessionId(sessionId) } });
    return res.count > 0;
  }

  /**
   * Ends every session of a key (when it is revoked). @returns how many were ended.
   * @throws TypeError when `keyId` is not a non-empty string (an undefined filter would end them all).
   */
  async endAllForKey(keyId: string): Promise<number> {
    requireId("keyId", keyId);
    return (await this.#prisma.dashboardSession.deleteMany({ where: { keyId } })).count;
  }

  /** Deletes sessions past their expiry or idle timeout. @returns how many. */
  async purgeExpired(limits: SessionLimits, nowEpochMs: number = Date.now()): Promise<number> {
    const res = await this.#prisma.dashboardSession.deleteMany({
      where: {
        OR: [
          { expiresAt: { lte: new Date(nowEpochMs) } },
          { lastSeenAt: { lte: new Date(nowEpochMs - limits.idleMs) } },
        ],
      },
    });
    return res.count;
  }
}
