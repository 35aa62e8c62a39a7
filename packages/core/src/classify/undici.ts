/**
 * undici (Node's built-in `fetch` and the `undici` package) and the WHATWG fetch/abort shapes.
 *
 * `fetch` rejects with `TypeError: fetch failed` whose `cause` is undici's own error (field case
 * T09: the message hides the reason); the engine walks `cause`, so this adapter sees the cause.
 * Codes: undici `lib/core/errors.js` (`ConnectTimeoutError` `UND_ERR_CONNECT_TIMEOUT`,
 * `HeadersTimeoutError` `UND_ERR_HEADERS_TIMEOUT`, `BodyTimeoutError` `UND_ERR_BODY_TIMEOUT`,
 * `RequestAbortedError` `UND_ERR_ABORTED`, `SocketError` `UND_ERR_SOCKET`).
 *
 * Precise "were the headers written?" evidence does not come from the error shape but from undici's
 * diagnostics channels (http.ts, invoke-tracker.ts); this adapter is the shape-only fallback.
 */
import type { ClientErrorAdapter, ShapeVerdict } from "./adapter.ts";

/** DOMException names of an aborted fetch (`AbortSignal.abort()` / `AbortSignal.timeout()`). */
const ABORT_NAMES: ReadonlySet<string> = new Set(["AbortError", "TimeoutError"]);

/**
 * undici's adapter: `UND_ERR_CONNECT_TIMEOUT` (the connection was never established) → NOT_SENT;
 * header/body timeouts and aborts → UNKNOWN `READ_TIMEOUT`; `UND_ERR_SOCKET` ("other side closed")
 * → UNKNOWN `RESET_AFTER_WRITE`; a `DOMException` named `AbortError`/`TimeoutError` (fetch aborted
 * by a signal, in Node, Bun or a browser; also the AWS SDK's node-http-handler `TimeoutError`)
 * → UNKNOWN `READ_TIMEOUT`: the request may already be on the wire when the signal fires.
 */
export const undici: ClientErrorAdapter = {
  name: "undici / fetch",
  notSentCodes: ["UND_ERR_CONNECT_TIMEOUT"],
  ambiguousCodes: {
    UND_ERR_HEADERS_TIMEOUT: "READ_TIMEOUT",
    UND_ERR_BODY_TIMEOUT: "READ_TIMEOUT",
    UND_ERR_ABORTED: "READ_TIMEOUT",
    UND_ERR_SOCKET: "RESET_AFTER_WRITE",
  },
  classify(link): ShapeVerdict | undefined {
    const name = link.name;
    if (typeof name === "string" && ABORT_NAMES.has(name))
      return { kind: "ambiguous", code: "READ_TIMEOUT", label: name };
    return undefined;
  },
};
