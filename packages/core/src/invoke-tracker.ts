/**
 * "Was anything written?" for a whole tool `invoke`, not for its last attempt (DESIGN.md rule 11;
 * issue 9 §3). An SDK inside `invoke` may retry on its own with its own transport: attempt 1 is
 * delivered then reset, attempts 2 and 3 are refused, and the SDK throws the last error
 * (ECONNREFUSED). Judged alone that error says "not sent"; judged for the invoke it says "an
 * earlier request may have taken effect" → UNKNOWN.
 *
 * How: an `AsyncLocalStorage` holds the tracker of the invoke running in the current async context
 * ({@link invokeTracked}), and subscribers on `node:diagnostics_channel` (which run synchronously
 * in the publisher's async context) attribute every request to that tracker:
 *
 * | channel (all exist on Node 20.20) | publisher | effect on the tracker |
 * |---|---|---|
 * | `undici:request:create` `{ request }` | undici's `Request` constructor, inside `dispatch()` — the npm `undici` package and the copy bundled in Node for global `fetch` publish the same names | I/O started; the request (a WeakMap key) belongs to the tracker; unsettled |
 * | `undici:client:sendHeaders` `{ request }` | undici right before the request head goes to the socket (after its last abort check) | written |
 * | `undici:request:headers` `{ request }` | undici, response head received | written (an answer proves delivery) |
 * | `undici:request:error` `{ request }` | undici, the request failed | settled (written only if sendHeaders came first) |
 * | `http.client.request.start` `{ request }` | Node 20's `ClientRequest._finish` — after `end()`, once a socket is assigned and the head queued on it (node:http, axios, got, node-fetch, the AWS SDK's NodeHttpHandler) | I/O started; unsettled; **written** once the request's socket is connected (at once for a reused keep-alive socket or a socket it cannot read): nothing reaches a remote before the TCP connection exists, and after it the head write is invisible, so: when unsure, written |
 * | `http.client.request.error` `{ request }` | node:http, the request failed | settled (written only if its socket had connected) |
 * | `http.client.response.finish` `{ request }` | node:http, response received | written |
 * | `net.client.socket` `{ socket }` | `net.connect` (any new TCP connection, including the clients above) | I/O started only |
 *
 * A request still unsettled when the invoke ends (started, neither written nor finished) may yet
 * be written: it counts as written. HTTP/2 (`node:http2`), raw sockets and worker threads give no
 * head-write signal: at most "I/O started" (from `net.client.socket`).
 *
 * Limits: attribution follows the async context in which a request is *created*. A dispatcher that
 * queues a request before creating it (an undici `Pool` with a `connections` limit) creates it
 * later in another context; such a request is invisible to its invoke (as before this tracker). So is
 * any request a client's own queue starts from another caller's context. When such an invisible
 * attempt was written and a later, visible one is refused before writing, the invoke reads "nothing
 * written" (FAILED_NO_EFFECT): a client that queues must bind its queued work to the caller's context
 * (`AsyncResource.bind`) or report its retries on the error (`retryCount`, `$metadata.attempts`).
 * A node:http request on a reused keep-alive socket whose body is streamed and never `end()`ed
 * publishes nothing on Node 20 (it has no `http.client.request.created` channel).
 *
 * Repeats (issue 21 §2; repeat-guard.ts): with `refuseRepeats`, a client's own retry of a written
 * request is failed before its head is written — undici: `request.error` set at `request:create`
 * (its `onConnect` aborts with it); node:http: destroyed at `request.start` while its socket still
 * connects, or at a new socket's first `connect`; on a reused socket it is only counted.
 *
 * The state lives on `globalThis` under `Symbol.for("tristate.invoke-tracker.v1")`, so two copies
 * of this package in one process share one tracker (as the error brands of errors.ts do).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import diagnosticsChannel from "node:diagnostics_channel";
import { isAmbiguousError, isDeadlineExceededError, isNotSentError, isRejectedError } from "./errors.ts";
import { IoScope } from "./io-scope.ts";
import {
  answerStatus,
  headNotYetOnWire,
  isRepeat,
  RepeatRefusedError,
  type RepeatSummary,
  type RequestAttempt,
  requestTarget,
  summariseRepeats,
} from "./repeat-guard.ts";

export { IoScope };

/**
 * How long a failed invoke that started no I/O is watched before "nothing was sent" is concluded,
 * ms: a request the tool started without awaiting (after reading credentials, say) shows up within
 * it. Longer delays are beyond what the executor can see; a tool must not throw while a request it
 * started is still on its way.
 */
export const NOT_SENT_GRACE_MS = 250;

function isTristateError(error: unknown): boolean {
  return isNotSentError(error) || isRejectedError(error) || isAmbiguousError(error) || isDeadlineExceededError(error);
}

interface TrackerState {
  storage: AsyncLocalStorage<IoScope>;
  /** Request object (undici `Request` or `http.ClientRequest`) → the scope it was created in. */
  owners: WeakMap<object, IoScope>;
  /** Requests already counted as written (a request counts once). */
  written: WeakSet<object>;
  /** Scopes of callers outside any invoke, keyed on their AbortSignal (one per executor call). */
  bySignal: WeakMap<AbortSignal, IoScope>;
  /** Request object → what the tracker knows of it (method, target, written, answer). */
  attempts: WeakMap<object, RequestAttempt>;
}

const STATE_KEY = Symbol.for("tristate.invoke-tracker.v1");

function chain(scope: IoScope, apply: (s: IoScope) => void): void {
  for (let s: IoScope | undefined = scope; s !== undefined; s = s.parent) apply(s);
}

function requestOf(message: unknown): object | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const request = (message as { request?: unknown }).request;
  return typeof request === "object" && request !== null ? request : undefined;
}

function markWritten(state: TrackerState, request: object): void {
  const attempt = state.attempts.get(request);
  if (attempt !== undefined) attempt.written = true;
  const scope = state.owners.get(request);
  if (scope === undefined || state.written.has(request)) return;
  state.written.add(request);
  chain(scope, (s) => {
    s.writes += 1;
    s.unsettled.delete(request);
  });
}

function settle(state: TrackerState, request: object): void {
  const attempt = state.attempts.get(request);
  if (attempt !== undefined) attempt.settled = true;
  const scope = state.owners.get(request);
  if (scope === undefined) return;
  chain(scope, (s) => s.unsettled.delete(request));
}

/**
 * Attributes a new request to `scope` and its ancestors. Returns the refusal when the request
 * repeats a written one of an invoke that refuses repeats (repeat-guard.ts); the caller fails the
 * request with it before its head is written, or, when it cannot, passes `refused` false.
 */
function start(
  state: TrackerState,
  request: object,
  scope: IoScope,
  undici: boolean,
  canRefuse: boolean,
): RepeatRefusedError | undefined {
  state.owners.set(request, scope);
  const target = requestTarget(request, undici);
  const guard = guardOf(scope);
  const repeat = target !== undefined && isRepeat((guard ?? scope).attempts, target);
  const refused = canRefuse && repeat && guard !== undefined;
  const attempt: RequestAttempt | undefined =
    target === undefined ? undefined : { ...target, written: false, settled: refused, refused, repeat };
  if (attempt !== undefined) state.attempts.set(request, attempt);
  chain(scope, (s) => {
    s.ioStarted = true;
    if (undici) s.undiciRequests += 1;
    if (attempt !== undefined) s.attempts.push(attempt);
    if (!refused) s.unsettled.add(request);
  });
  return refused && attempt !== undefined ? new RepeatRefusedError(attempt.method, attempt.target) : undefined;
}

/** The innermost scope of the chain that refuses repeats, if any. */
function guardOf(scope: IoScope): IoScope | undefined {
  for (let s: IoScope | undefined = scope; s !== undefined; s = s.parent) if (s.refuseRepeats) return s;
  return undefined;
}

/**
 * A node:http request that streams its body (got) publishes `http.client.request.start` only
 * after its head went out. A new socket's first `connect` listener (registered at its creation,
 * before Node's own, which writes the queued head) fails such a repeat before anything is written.
 */
function refuseOnConnect(state: TrackerState, scope: IoScope, socket: unknown): void {
  if (!hasOnce(socket) || guardOf(scope) === undefined) return;
  socket.once("connect", () => {
    const request = (socket as { _httpMessage?: unknown })._httpMessage;
    if (typeof request !== "object" || request === null || state.attempts.has(request)) return;
    const target = requestTarget(request, false);
    const guard = guardOf(scope);
    if (target === undefined || guard === undefined || !isRepeat(guard.attempts, target)) return;
    const refusal = start(state, request, scope, false, true);
    if (refusal !== undefined) (socket as { destroy?: (error: Error) => void }).destroy?.(refusal);
  });
}

/** Records the status of the answer head a request received (undici and node:http messages). */
function answered(state: TrackerState, request: object, message: unknown): void {
  const attempt = state.attempts.get(request);
  const status = answerStatus(message);
  if (attempt !== undefined && status !== undefined) attempt.status = status;
}

interface EventTarget {
  once(event: string, listener: (...args: unknown[]) => void): unknown;
}

function hasOnce(value: unknown): value is EventTarget {
  return typeof value === "object" && value !== null && typeof (value as EventTarget).once === "function";
}

/**
 * node:http: written once the request's socket is connected; settled when the request closes.
 * Node 20 publishes `http.client.request.start` from `ClientRequest._finish` (after `end()`, once a
 * socket is assigned and the head is queued on it), so the socket is usually there already.
 */
function watchClientRequest(state: TrackerState, request: object): void {
  const watchSocket = (socket: unknown): void => {
    if (typeof socket !== "object" || socket === null) {
      markWritten(state, request);
      return;
    }
    const { connecting, pending, destroyed } = socket as {
      connecting?: unknown;
      pending?: unknown;
      destroyed?: unknown;
    };
    if (connecting === true && hasOnce(socket)) socket.once("connect", () => markWritten(state, request));
    else if (pending === true && destroyed === true)
      settle(state, request); // never connected, already gone
    else markWritten(state, request);
  };
  const socket = (request as { socket?: unknown }).socket;
  if (typeof socket === "object" && socket !== null) watchSocket(socket);
  else if (hasOnce(request)) request.once("socket", watchSocket);
  else markWritten(state, request);
  if (hasOnce(request)) request.once("close", () => settle(state, request));
}

function createState(): TrackerState {
  const state: TrackerState = {
    storage: new AsyncLocalStorage<IoScope>(),
    owners: new WeakMap(),
    written: new WeakSet(),
    bySignal: new WeakMap(),
    attempts: new WeakMap(),
  };
  diagnosticsChannel.subscribe("undici:request:create", (message) => {
    const request = requestOf(message);
    const scope = state.storage.getStore();
    if (request === undefined || scope === undefined) return;
    // undici's Request.onConnect aborts with `request.error`, if set, before the head is written.
    const refusal = start(state, request, scope, true, true);
    if (refusal !== undefined) (request as { error?: unknown }).error = refusal;
  });
  diagnosticsChannel.subscribe("undici:client:sendHeaders", (message) => {
    const request = requestOf(message);
    if (request !== undefined) markWritten(state, request);
  });
  diagnosticsChannel.subscribe("undici:request:headers", (message) => {
    const request = requestOf(message);
    if (request === undefined) return;
    answered(state, request, message);
    markWritten(state, request);
  });
  diagnosticsChannel.subscribe("undici:request:error", (message) => {
    const request = requestOf(message);
    if (request !== undefined) settle(state, request);
  });
  diagnosticsChannel.subscribe("http.client.request.start", (message) => {
    const request = requestOf(message);
    const scope = state.storage.getStore();
    if (request === undefined || scope === undefined || state.attempts.get(request)?.refused) return;
    const refusal = start(state, request, scope, false, headNotYetOnWire(request));
    if (refusal === undefined) watchClientRequest(state, request);
    else (request as { destroy?: (error: Error) => void }).destroy?.(refusal);
  });
  diagnosticsChannel.subscribe("http.client.request.error", (message) => {
    const request = requestOf(message);
    if (request !== undefined) settle(state, request);
  });
  diagnosticsChannel.subscribe("http.client.response.finish", (message) => {
    const request = requestOf(message);
    if (request === undefined) return;
    answered(state, request, message);
    markWritten(state, request);
  });
  diagnosticsChannel.subscribe("net.client.socket", (message) => {
    const scope = state.storage.getStore();
    if (scope === undefined) return;
    chain(scope, (s) => {
      s.ioStarted = true;
    });
    refuseOnConnect(state, scope, (message as { socket?: unknown } | null)?.socket);
  });
  return state;
}

function trackerState(): TrackerState {
  const holder = globalThis as { [STATE_KEY]?: TrackerState };
  holder[STATE_KEY] ??= createState();
  return holder[STATE_KEY];
}

const state = trackerState();

/** The innermost scope of the current async context, if any (internal). */
export function currentScope(): IoScope | undefined {
  return state.storage.getStore();
}

/**
 * The scope a caller outside any {@link invokeTracked} gets for one AbortSignal (internal): one
 * executor call uses one signal, so "written under this signal" approximates the call.
 */
export function scopeForSignal(signal: AbortSignal): IoScope {
  let scope = state.bySignal.get(signal);
  if (scope === undefined) {
    scope = new IoScope(undefined);
    state.bySignal.set(signal, scope);
  }
  return scope;
}

/** Runs `fn` synchronously with `scope` as the current scope of everything it starts (internal). */
export function runInScope<T>(scope: IoScope, fn: () => T): T {
  return state.storage.run(scope, fn);
}

/**
 * Forgets this scope's unsettled undici requests (internal, for `callHttp`): only for requests the
 * caller aborted before their head was written, which undici drops at its last abort check
 * (`Request.onConnect`) and never writes.
 */
export function releaseUnsent(scope: IoScope): void {
  for (const request of [...scope.unsettled]) settle(state, request);
}

/**
 * One tool `invoke` run under {@link invokeTracked}, and what it did to the network.
 * - `ok`/`value` or `ok`/`error`: how `fn` settled.
 * - `written`: true when at least one request started in the invoke's async context had its head
 *   written (undici `sendHeaders`; node:http: its socket connected) or was still unsettled when the
 *   invoke ended (it may be written yet). When unsure, written.
 * - `writtenRequests`: how many such requests (written plus unsettled); 0 when `written` is false.
 * - `repeats`: repeats of one unsafe request within the invoke, written or refused (repeat-guard.ts).
 * - `ioStarted`: true when any HTTP request or TCP socket was started in the invoke's async context,
 *   written or not. False means provably no network I/O through Node's HTTP clients or `net`.
 * Source: DESIGN.md rule 11; issue 9 §3.
 */
export type InvokeAttempt<T> =
  | { ok: true; value: T; written: boolean; ioStarted: boolean; writtenRequests: number; repeats: RepeatSummary }
  | {
      ok: false;
      error: unknown;
      written: boolean;
      ioStarted: boolean;
      writtenRequests: number;
      repeats: RepeatSummary;
    };

/** Options of {@link invokeTracked}. */
export interface InvokeTrackOptions {
  /**
   * Fail a repeat of a written request (same unsafe method and target, e.g. a client library's own
   * retry) before its head is written, with a `RepeatRefusedError` (issue 21 §2). For tools whose
   * remote does not dedupe a key. Default false. Where the head is already on the wire (a node:http
   * request on a reused keep-alive socket) the repeat is not refused: `repeats.written` counts it.
   */
  refuseRepeats?: boolean;
}

function settleTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function evidence(scope: IoScope): {
  written: boolean;
  ioStarted: boolean;
  writtenRequests: number;
  repeats: RepeatSummary;
} {
  const writtenRequests = scope.writes + scope.unsettled.size;
  const repeats = summariseRepeats(scope.attempts, scope.refuseRepeats);
  return { written: writtenRequests > 0, ioStarted: scope.ioStarted, writtenRequests, repeats };
}

/**
 * Runs a tool's `invoke` (`fn`) in its own tracked async context and reports, with its result or
 * error, whether any request of the whole invoke was written — every attempt of every client it
 * used, not just the last (DESIGN.md rule 11; issue 9 §3). Nested calls nest: the inner invoke's
 * requests also count for the outer one.
 *
 * On failure, when nothing was seen written yet, it waits one event-loop turn (`setImmediate`, well
 * under 1 ms) before reading the tracker, so a request the tool started without awaiting (e.g. one
 * begun after a `process.nextTick`) is seen before anyone concludes "not written"; when no I/O at all
 * was seen and the error is not one of Tristate's typed errors, it waits {@link NOT_SENT_GRACE_MS}.
 *
 * Never throws, never rejects: an error of `fn` (thrown synchronously or rejected) comes back as
 * `{ ok: false, error }`. Classify it with `classifyInvokeFailure` (classify-invoke.ts, on top of the
 * per-client-library adapters in classify/).
 * @param fn the invoke, e.g. `() => tool.invoke(args, ctx)`.
 * @returns the {@link InvokeAttempt}: the value or error plus `written`, `writtenRequests`, `ioStarted`.
 */
export async function invokeTracked<T>(
  fn: () => Promise<T>,
  options: InvokeTrackOptions = {},
): Promise<InvokeAttempt<T>> {
  const scope = new IoScope(currentScope());
  scope.refuseRepeats = options.refuseRepeats === true;
  try {
    const value = await state.storage.run(scope, fn);
    return { ok: true, value, ...evidence(scope) };
  } catch (error) {
    if (scope.writes === 0) await settleTurn();
    // A non-Tristate error with no I/O seen may be a tool's code error thrown while a request it did
    // not await is still on its way (credentials read first, then the request): give such a request
    // a grace period to show up before anyone concludes "nothing was sent" (TOOL_ERROR_NOT_SENT).
    if (!scope.ioStarted && !isTristateError(error)) await new Promise((r) => setTimeout(r, NOT_SENT_GRACE_MS));
    return { ok: false, error, ...evidence(scope) };
  }
}
