/**
 * "Was anything written to the socket?" — answered from undici's own diagnostics channels rather
 * than guessed from error messages (DESIGN.md "Error mapping": an error raised before the request's
 * headers were written is NotSent; anything later is ambiguous).
 *
 * undici 7 publishes, on `node:diagnostics_channel`:
 * - `undici:request:create` `{ request }` from the `Request` constructor, synchronously inside
 *   `dispatcher.request()` when the dispatcher is an undici `Agent`/`Pool`/`Client` with a free slot;
 * - `undici:client:sendHeaders` `{ request, headers, socket }` from `client-h1.js` `writeH1` (and
 *   `client-h2.js`), right before the request head is handed to the socket — and only after the
 *   request passed its last abort check (`request.onConnect`), so an aborted request never gets here.
 *
 * A call opens a capture window around its synchronous `dispatcher.request()` call; the `Request`
 * objects created inside that window belong to it (the `Request` object itself is the per-request
 * marker, held in a WeakMap). `sendHeaders` for such a request flips `headersSent`.
 *
 * When no `Request` was captured (a dispatcher that queues before creating the request, such as a
 * `Pool` with a connection limit, an interceptor that dispatches asynchronously, or a non-undici
 * dispatcher), the tracker says so (`correlated: false`) and callers must not conclude "not sent".
 */
import diagnosticsChannel from "node:diagnostics_channel";

/** Per-call record of what undici reported. */
export interface SendTracker {
  /** True once at least one undici `Request` of this call was captured. */
  correlated: boolean;
  /** True once undici published `undici:client:sendHeaders` for one of this call's requests. */
  headersSent: boolean;
}

const owners = new WeakMap<object, SendTracker>();
let capturing: SendTracker | undefined;

function requestOf(message: unknown): object | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const request = (message as { request?: unknown }).request;
  return typeof request === "object" && request !== null ? request : undefined;
}

diagnosticsChannel.subscribe("undici:request:create", (message) => {
  const request = requestOf(message);
  if (request === undefined || capturing === undefined) return;
  owners.set(request, capturing);
  capturing.correlated = true;
});

diagnosticsChannel.subscribe("undici:client:sendHeaders", (message) => {
  const request = requestOf(message);
  if (request === undefined) return;
  const tracker = owners.get(request);
  if (tracker) tracker.headersSent = true;
});

/**
 * Runs `dispatch` (which must call the undici dispatcher synchronously) inside a capture window, so
 * the undici requests it creates are attributed to `tracker`.
 * @returns what `dispatch` returned.
 * @throws whatever `dispatch` throws synchronously.
 */
export function dispatchTracked<T>(tracker: SendTracker, dispatch: () => T): T {
  const previous = capturing;
  capturing = tracker;
  try {
    return dispatch();
  } finally {
    capturing = previous;
  }
}
