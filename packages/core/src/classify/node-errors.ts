/**
 * Node.js's own error codes: libuv/getaddrinfo system errors (`err.code` on a `net.Socket`,
 * `http.ClientRequest` or `dns.lookup` error) and OpenSSL certificate verification codes raised
 * during the TLS handshake. Every Node-based client (node:http, undici, axios, got, the AWS SDK's
 * node-http-handler) passes these through, often as the `cause` of its own error.
 */
import type { ClientErrorAdapter } from "./adapter.ts";

/**
 * Node's error codes that prove the request never left the client: the failure happened while
 * resolving the name, connecting, or verifying the server's certificate during the TLS handshake,
 * all of which precede writing the first byte of the request. Source: field case T09's table.
 *
 * Deliberately absent: `ETIMEDOUT`, `EHOSTUNREACH`, `ENETUNREACH` and OpenSSL `ERR_SSL_*` alerts —
 * each can also occur on an established connection after bytes were written (a TLS 1.3 server may
 * reject a client certificate after the client already sent data), so they stay UNKNOWN.
 */
const NOT_SENT = [
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  // Server certificate verification fails during the handshake, before any request byte is sent.
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_REVOKED",
  "INVALID_CA",
  "HOSTNAME_MISMATCH",
] as const;

/**
 * Node's adapter: the system error codes above → NOT_SENT; a reset or broken pipe (a reset alone
 * cannot tell whether bytes were written) → UNKNOWN `RESET_AFTER_WRITE`; `ETIMEDOUT` (a socket
 * timeout, also axios's `clarifyTimeoutError` and got's `TimeoutError` code) and Node's
 * `AbortError` (`code: "ABORT_ERR"`, from an aborted `signal`) → UNKNOWN `READ_TIMEOUT`.
 */
export const nodeErrors: ClientErrorAdapter = {
  name: "node",
  notSentCodes: NOT_SENT,
  ambiguousCodes: {
    ABORT_ERR: "READ_TIMEOUT",
    ETIMEDOUT: "READ_TIMEOUT",
    ECONNRESET: "RESET_AFTER_WRITE",
    EPIPE: "RESET_AFTER_WRITE",
  },
};
