/**
 * Bun's built-in `fetch` (not installed in this workspace: shapes from Bun's source).
 *
 * Bun rejects a failed fetch with a `SystemError` whose `code` is the Zig error's name and whose
 * message is fixed (oven-sh/bun `src/bun.js/webcore/response.zig` `FetchTasklet.onReject`, later
 * `src/bun.js/webcore/fetch/FetchTasklet.zig`): `ConnectionRefused` "Unable to connect. Is the
 * computer able to access the url?"; `ConnectionClosed` "The socket connection was closed
 * unexpectedly. For more information, pass `verbose: true` in the second argument to fetch()"
 * (newer Bun spells that code `ECONNRESET`, Node's adapter's; some versions and wrappers lose the
 * code and keep only the message, field case T09). A timeout or abort rejects with a DOMException
 * `TimeoutError`/`AbortError` (the undici/fetch adapter's).
 */
import type { ClientErrorAdapter, ShapeVerdict } from "./adapter.ts";

/** Bun's fetch throws this message, at times with no `code` and no `cause` (field case T09). */
const SOCKET_CLOSED = /socket connection was closed unexpectedly/i;

/**
 * Bun's adapter: `ConnectionRefused` → NOT_SENT; `ConnectionClosed` (the keep-alive socket closed
 * under the request) and the message-only "socket connection was closed unexpectedly" → UNKNOWN
 * `RESET_AFTER_WRITE`. Other Bun codes (`FailedToOpenSocket`, …) are unrecognised → UNKNOWN.
 */
export const bun: ClientErrorAdapter = {
  name: "bun",
  notSentCodes: ["ConnectionRefused"],
  ambiguousCodes: { ConnectionClosed: "RESET_AFTER_WRITE" },
  classify(link): ShapeVerdict | undefined {
    const message = link.message;
    if (typeof message === "string" && SOCKET_CLOSED.test(message)) {
      return { kind: "ambiguous", code: "RESET_AFTER_WRITE", label: "socket closed unexpectedly" };
    }
    return undefined;
  },
};
