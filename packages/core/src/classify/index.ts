/**
 * Classification of transport errors and HTTP statuses into Tristate's outcomes, per DESIGN.md
 * "Error mapping: could the request have been delivered?" and field case T09 ("fetch failed" hides
 * the real cause). The rule everywhere: **when unsure, UNKNOWN** — a wrong UNKNOWN costs one probe,
 * a wrong FAILED_NO_EFFECT costs a duplicate effect.
 *
 * Layout: adapter.ts is the contract, engine.ts the shared logic, and each client library has one
 * file (with its test beside it, built from the library's real error shape). This file is the
 * registry: supporting another client is one more file and one more line in {@link CLIENT_ADAPTERS}.
 *
 * Recipe, another client library's error mapping:
 * 1. `classify/<library>.ts` exporting a `ClientErrorAdapter`: the library's own string codes in
 *    `notSentCodes` (only codes it raises strictly before the first request byte is written) or
 *    `ambiguousCodes`, and `httpStatus` / `classify` / `retries` for what its errors carry
 *    otherwise; cite the library's source file for each shape. Codes it passes through from Node
 *    (`ECONNREFUSED`, …) are node-errors.ts's already; `createRegistry` refuses a code claimed twice.
 * 2. One line in {@link CLIENT_ADAPTERS}.
 * 3. `classify/<library>.test.ts`: produce the errors with the real client against the loopback
 *    remotes of fixtures.ts (refused, read timeout after the request was sent, reset after write,
 *    a 5xx answer) when the library is in the workspace, else build them as its source does.
 * 4. A library that retries on its own: a `retries` rule for its errors (never NOT_SENT from the
 *    error alone), and a line in `RETRYING_CLIENTS` (packages/core/test/issue-21/retrying-clients.ts):
 *    its retry of a written request is refused by the invoke tracker or reported `REPEATED_WRITE`.
 */
import type { ClassifyOptions } from "../http-status.ts";
import type { ReasonCode } from "../statuses.ts";
import type { Classification, ClientErrorAdapter, LinkVerdict } from "./adapter.ts";
import { awsSdk } from "./aws-sdk.ts";
import { axios } from "./axios.ts";
import { bun } from "./bun.ts";
import { classifyWith, createRegistry, judgeLinkWith } from "./engine.ts";
import { got } from "./got.ts";
import { nodeErrors } from "./node-errors.ts";
import { stainless } from "./stainless.ts";
import { stripe } from "./stripe.ts";
import { undici } from "./undici.ts";

export type {
  Classification,
  ClientErrorAdapter,
  LinkVerdict,
} from "./adapter.ts";
export { stringField } from "./adapter.ts";
export { describe, links, typedClassification } from "./engine.ts";
export type { ClassifyOptions };

/**
 * The client libraries whose errors {@link classifyError} knows, in the order their shape rules,
 * status readers and retry readers are asked (see `ClientErrorAdapter`). One line per library.
 */
export const CLIENT_ADAPTERS: readonly ClientErrorAdapter[] = [
  nodeErrors,
  undici,
  axios,
  got,
  bun,
  awsSdk,
  stainless,
  stripe,
];

const registry = createRegistry(CLIENT_ADAPTERS);

/**
 * Error codes that prove the request never left the client: the failure happened while resolving
 * the name, connecting or verifying the server's certificate during the TLS handshake, all of which
 * precede writing the first byte of the request. Source: field case T09's table. The union of the
 * adapters' `notSentCodes` (Node's system and certificate codes in node-errors.ts, undici's
 * `UND_ERR_CONNECT_TIMEOUT`, Bun's `ConnectionRefused`).
 *
 * Deliberately absent: `ETIMEDOUT`, `EHOSTUNREACH`, `ENETUNREACH` and OpenSSL `ERR_SSL_*` alerts —
 * each can also occur on an established connection after bytes were written (a TLS 1.3 server may
 * reject a client certificate after the client already sent data), so they stay UNKNOWN.
 */
export const NOT_SENT_CODES: ReadonlySet<string> = registry.notSentCodes;

/**
 * Error codes that mean "the request may have been delivered", with the reason code each maps to.
 * Source: field case T09's table. A reset alone cannot tell whether bytes were written, so it is
 * UNKNOWN, never NOT_SENT. The union of the adapters' `ambiguousCodes`.
 */
export const AMBIGUOUS_CODES: ReadonlyMap<string, ReasonCode> = registry.ambiguousCodes;

/** What one link of an error chain says about delivery (see {@link classifyError}). */
export function judgeLink(link: unknown, options: ClassifyOptions): LinkVerdict {
  return judgeLinkWith(registry, link, options);
}

/**
 * Classifies anything a tool's `invoke` threw: could the request have been delivered?
 *
 * Order (DESIGN.md "Error mapping"; field case T09):
 * 1. Tristate's typed errors, from any copy of the package: `NotSentError`, `RejectedError`,
 *    `DeadlineExceededError` → FAILED_NO_EFFECT with their code; `AmbiguousError` → UNKNOWN.
 * 2. The shapes real clients throw ({@link CLIENT_ADAPTERS}), walking `error.cause` chains (undici's
 *    `TypeError: fetch failed` hides the reason in `cause`) and `AggregateError.errors`:
 *    - {@link NOT_SENT_CODES} (ECONNREFUSED, ENOTFOUND, EAI_AGAIN, UND_ERR_CONNECT_TIMEOUT, TLS
 *      certificate failures) → FAILED_NO_EFFECT, code `NOT_SENT`;
 *    - {@link AMBIGUOUS_CODES}: UND_ERR_HEADERS_TIMEOUT/UND_ERR_BODY_TIMEOUT → UNKNOWN `READ_TIMEOUT`;
 *      UND_ERR_SOCKET/ECONNRESET/EPIPE → UNKNOWN `RESET_AFTER_WRITE`; axios ECONNABORTED → UNKNOWN
 *      `READ_TIMEOUT`, axios ERR_NETWORK → UNKNOWN `AMBIGUOUS`;
 *    - `DOMException` `AbortError`/`TimeoutError` → UNKNOWN `READ_TIMEOUT`;
 *    - Bun's message-only "The socket connection was closed unexpectedly" → UNKNOWN `RESET_AFTER_WRITE`;
 *    - an HTTP-client error carrying `response.status` (axios, ky/got `HTTPError`) → `classifyHttpStatus`.
 * 3. Anything else → UNKNOWN `AMBIGUOUS`: when unsure, UNKNOWN.
 * 4. Whatever the above concluded, an error that says its client already retried is never
 *    FAILED_NO_EFFECT (an earlier attempt may have been delivered; DESIGN.md rule 11, issue 9 §3):
 *    axios-retry's `error.config["axios-retry"].retryCount` > 0, got's `error.request.retryCount`
 *    (or `error.response.retryCount`) > 0, the AWS SDK v3's `error.$metadata.attempts` > 1, on any
 *    link → UNKNOWN `AMBIGUOUS` (keeping `httpStatus`).
 *
 * A chain is NOT_SENT only if some link proves it and **no** link suggests delivery or carries an
 * unrecognised string `code` (a retrying wrapper whose last cause was ECONNREFUSED may have sent
 * earlier attempts). Links with no `code` (`TypeError: fetch failed`) are transparent.
 *
 * Never throws.
 * @param error anything thrown or rejected.
 * @param options per-tool overrides (`noEffectStatuses`) used when the error carries an HTTP status.
 */
export function classifyError(error: unknown, options: ClassifyOptions = {}): Classification {
  return classifyWith(registry, error, options);
}
