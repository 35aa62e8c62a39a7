import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import canonicalize from "canonicalize";
import type { ConfirmationSubject } from "./confirmation-subject.ts";

/**
 * Why a confirmation token does not confirm a call (a closed union):
 * - `malformed`: not a token of this format (also a token of the old key-only format);
 * - `forged`: its MAC does not verify with this secret (tampered, or made with another secret);
 * - `expired`: its expiry has passed;
 * - `another_call`: it confirms another tenant, run, step, tool or identity;
 * - `arguments_differ`: same call, but an argument's canonical value differs from what was
 *   confirmed, or an argument was added or left out (`fields` names them).
 */
export type ConfirmationRefusalReason = "malformed" | "forged" | "expired" | "another_call" | "arguments_differ";

/** The answer of {@link ConfirmationVerifier.verify}. */
export type ConfirmationVerdict =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly reason: ConfirmationRefusalReason;
      /** The top-level argument names whose values differ (sorted); empty unless `arguments_differ`. */
      readonly fields: readonly string[];
    };

/**
 * Verifies confirmation tokens: the proof that an operator or the end user confirmed one specific
 * high-stakes call (a tool's `confirmation` policy). A token confirms one tenant, run, step and tool,
 * the call's idempotency key (so its canonical identity), and the canonical form of every argument
 * that was shown when it was issued ({@link ConfirmationSubject}); a call with any other argument
 * value is not confirmed by it.
 */
export interface ConfirmationVerifier {
  /** Whether `token` confirms `subject` at `nowEpochMs` (epoch ms), and if not, why. Never throws. */
  verify(token: string, subject: ConfirmationSubject, nowEpochMs: number): ConfirmationVerdict;
}

/** Issues and verifies confirmation tokens. */
export interface ConfirmationTokens extends ConfirmationVerifier {
  /**
   * A token confirming `subject`, valid for `ttlMs` (default 15 min) from `nowEpochMs` (epoch ms).
   * Opaque to clients. Shape: `ct2.<base64url JSON payload>.<base64url HMAC-SHA256 of the payload>`;
   * the payload holds the expiry (epoch ms), a keyed tag of the call (tenant, run, step, tool, key)
   * and, per top-level argument, its name and a keyed 96-bit tag of its canonical value — tags, not
   * values or plain digests, so a token reveals nothing of a low-entropy argument (an amount, an
   * account number) and the verifier can still name the argument that differs. About 40 characters
   * per argument plus 120.
   * @throws TypeError when `ttlMs` is not > 0 ms.
   */
  issue(subject: ConfirmationSubject, nowEpochMs: number, ttlMs?: number): string;
}

/** Default lifetime of a confirmation token, ms (15 min). */
export const DEFAULT_CONFIRMATION_TTL_MS = 15 * 60_000;

/** Longest token `verify` reads, characters (a catalog's tool has far fewer than 100 arguments). */
export const MAX_CONFIRMATION_TOKEN_CHARS = 8192;

const PREFIX = "ct2";
const TAG_BYTES = 12;
const TOKEN_SHAPE = /^ct2\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/;

interface Payload {
  /** Expiry, epoch ms. */
  e: number;
  /** Tag of the call. */
  c: string;
  /** `[argument name, tag of its canonical value]`, sorted by name. */
  a: [string, string][];
}

function isPayload(value: unknown): value is Payload {
  if (typeof value !== "object" || value === null) return false;
  const p = value as Record<string, unknown>;
  return (
    Number.isSafeInteger(p.e) &&
    typeof p.c === "string" &&
    Array.isArray(p.a) &&
    p.a.every((f) => Array.isArray(f) && f.length === 2 && typeof f[0] === "string" && typeof f[1] === "string")
  );
}

/**
 * HMAC-SHA256 confirmation tokens (RFC 2104) bound to what was confirmed ({@link ConfirmationSubject}).
 * Tokens from one secret verify only with that secret: replicas must share it. Without a secret, a
 * random one is made (tokens then die with the process).
 * @throws TypeError when `secret` is shorter than 16 characters.
 */
export function createConfirmationTokens(secret: string = randomBytes(32).toString("base64url")): ConfirmationTokens {
  if (typeof secret !== "string" || secret.length < 16) {
    throw new TypeError("createConfirmationTokens: secret must be at least 16 characters");
  }
  const hmac = (text: string) => createHmac("sha256", secret).update(text, "utf8").digest();
  const tag = (parts: unknown[]) =>
    hmac(canonicalize(parts) ?? "")
      .subarray(0, TAG_BYTES)
      .toString("base64url");
  const callTag = (s: ConfirmationSubject) => tag(["call", s.tenant, s.runId, s.stepId, s.tool, s.idempotencyKey]);
  const argTags = (s: ConfirmationSubject): Map<string, string> =>
    new Map(
      Object.keys(s.args)
        .sort()
        .map((name) => [name, tag(["arg", s.tenant, s.runId, s.stepId, s.tool, s.idempotencyKey, name, s.args[name]])]),
    );
  const mac = (payload: string) => hmac(`${PREFIX}.${payload}`).toString("base64url");
  const refuse = (reason: ConfirmationRefusalReason, fields: string[] = []): ConfirmationVerdict => ({
    ok: false,
    reason,
    fields,
  });
  return {
    issue(subject, nowEpochMs, ttlMs = DEFAULT_CONFIRMATION_TTL_MS) {
      if (!(ttlMs > 0)) throw new TypeError("issue: ttlMs must be > 0 ms");
      const payload: Payload = { e: Math.floor(nowEpochMs + ttlMs), c: callTag(subject), a: [...argTags(subject)] };
      const encoded = Buffer.from(JSON.stringify(payload), "utf8").toString("base64url");
      return `${PREFIX}.${encoded}.${mac(encoded)}`;
    },
    verify(token, subject, nowEpochMs) {
      if (typeof token !== "string" || token.length > MAX_CONFIRMATION_TOKEN_CHARS) return refuse("malformed");
      const match = TOKEN_SHAPE.exec(token);
      if (!match) return refuse("malformed");
      const expected = Buffer.from(mac(match[1]!));
      const given = Buffer.from(match[2]!);
      if (!(expected.length === given.length && timingSafeEqual(expected, given))) return refuse("forged");
      let payload: unknown;
      try {
        payload = JSON.parse(Buffer.from(match[1]!, "base64url").toString("utf8"));
      } catch {
        return refuse("malformed");
      }
      if (!isPayload(payload)) return refuse("malformed");
      if (!(payload.e > nowEpochMs)) return refuse("expired");
      if (payload.c !== callTag(subject)) return refuse("another_call");
      const confirmed = new Map(payload.a);
      const now = argTags(subject);
      const names = [...new Set([...confirmed.keys(), ...now.keys()])].sort();
      const differ = names.filter((name) => confirmed.get(name) !== now.get(name));
      return differ.length > 0 ? refuse("arguments_differ", differ) : { ok: true };
    },
  };
}
