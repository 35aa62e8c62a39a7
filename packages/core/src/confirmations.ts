import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Verifies confirmation tokens: the proof that an operator or the end user confirmed one specific
 * high-stakes call (a tool's `confirmation` policy). A token is bound to the call's idempotency key,
 * so it confirms that effect and no other.
 */
export interface ConfirmationVerifier {
  /** True when `token` confirms the call with this idempotency key now. */
  verify(token: string, idempotencyKey: string, nowEpochMs: number): boolean;
}

/** Issues and verifies confirmation tokens. */
export interface ConfirmationTokens extends ConfirmationVerifier {
  /**
   * A token confirming the call with `idempotencyKey`, valid for `ttlMs` (default 15 min) from `nowEpochMs`.
   * Shape: `<expiry epoch ms>.<base64url HMAC-SHA256 of "<key>.<expiry>">`.
   */
  issue(idempotencyKey: string, nowEpochMs: number, ttlMs?: number): string;
}

/** Default lifetime of a confirmation token, ms (15 min). */
export const DEFAULT_CONFIRMATION_TTL_MS = 15 * 60_000;

/**
 * HMAC-SHA256 confirmation tokens (RFC 2104). Tokens from one secret verify only with that secret:
 * replicas must share it. Without a secret, a random one is made (tokens then die with the process).
 * @throws TypeError when `secret` is shorter than 16 characters.
 */
export function createConfirmationTokens(secret: string = randomBytes(32).toString("base64url")): ConfirmationTokens {
  if (typeof secret !== "string" || secret.length < 16) {
    throw new TypeError("createConfirmationTokens: secret must be at least 16 characters");
  }
  const mac = (key: string, expiry: number) =>
    createHmac("sha256", secret).update(`${key}.${expiry}`, "utf8").digest("base64url");
  return {
    issue(idempotencyKey, nowEpochMs, ttlMs = DEFAULT_CONFIRMATION_TTL_MS) {
      if (!(ttlMs > 0)) throw new TypeError("issue: ttlMs must be > 0 ms");
      const expiry = Math.floor(nowEpochMs + ttlMs);
      return `${expiry}.${mac(idempotencyKey, expiry)}`;
    },
    verify(token, idempotencyKey, nowEpochMs) {
      if (typeof token !== "string") return false;
      const match = /^(\d{1,16})\.([A-Za-z0-9_-]{43})$/.exec(token);
      if (!match) return false;
      const expiry = Number(match[1]);
      if (!(expiry > nowEpochMs)) return false;
      const expected = Buffer.from(mac(idempotencyKey, expiry));
      const given = Buffer.from(match[2]!);
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
  };
}
