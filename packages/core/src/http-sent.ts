/**
 * "Was anything written to the socket?" for one `callHttp` request and for the call around it —
 * answered from undici's own diagnostics channels (through the invoke tracker, invoke-tracker.ts)
 * rather than guessed from error messages (DESIGN.md "Error mapping": an error raised before the
 * request's headers were written is NotSent; anything later is ambiguous; rule 11: the question is
 * asked of the whole invoke).
 *
 * undici 7 publishes, on `node:diagnostics_channel`:
 * - `undici:request:create` `{ request }` from the `Request` constructor, synchronously inside
 *   `dispatcher.request()` when the dispatcher is an undici `Agent`/`Pool`/`Client` with a free slot;
 * - `undici:client:sendHeaders` `{ request, headers, socket }` from `client-h1.js` `writeH1` (and
 *   `client-h2.js`), right before the request head is handed to the socket — and only after the
 *   request passed its last abort check (`request.onConnect`), so an aborted request never gets here.
 *
 * A call runs its `dispatcher.request()` inside its own scope, a child of the invoke's scope (or,
 * outside any `invokeTracked`, of a scope kept per AbortSignal): the undici requests created there
 * belong to the call, and their writes also count for the invoke.
 *
 * When no `Request` was attributed (a dispatcher that queues before creating the request, such as a
 * `Pool` with a connection limit, or a non-undici dispatcher), the tracker says so
 * (`correlated: false`) and callers must not conclude "not sent".
 */
import { currentScope, IoScope, releaseUnsent, runInScope, scopeForSignal } from "./invoke-tracker.ts";

/** Per-call record of what undici reported, read by `callHttp`. */
export interface SendTracker {
  /** True once at least one undici `Request` of this call was attributed to it. */
  readonly correlated: boolean;
  /** True once undici published `undici:client:sendHeaders` for one of this call's requests. */
  readonly headersSent: boolean;
  /**
   * True when a request of the enclosing invoke — other than this call's own unwritten ones — was
   * written or may still be (DESIGN.md rule 11). Outside any `invokeTracked`: under the same signal.
   */
  readonly invokeWritten: boolean;
  /**
   * Runs `dispatch` (which must call the undici dispatcher synchronously) inside this call's scope,
   * so the undici requests it creates are attributed to this call and to its invoke.
   * @returns what `dispatch` returned.
   * @throws whatever `dispatch` throws synchronously.
   */
  dispatch<T>(dispatch: () => T): T;
  /**
   * Declares this call's unwritten requests abandoned: the caller aborted them before their head was
   * written, and undici drops an aborted request at its last abort check, never writing it.
   */
  releaseUnsent(): void;
}

class CallTracker implements SendTracker {
  readonly #scope: IoScope;
  readonly #invoke: IoScope | undefined;

  constructor(invoke: IoScope | undefined) {
    this.#invoke = invoke;
    this.#scope = new IoScope(invoke);
  }

  get correlated(): boolean {
    return this.#scope.undiciRequests > 0;
  }

  get headersSent(): boolean {
    return this.#scope.writes > 0;
  }

  get invokeWritten(): boolean {
    const invoke = this.#invoke;
    if (invoke === undefined) return false;
    if (invoke.writes > 0) return true;
    for (const request of invoke.unsettled) if (!this.#scope.unsettled.has(request)) return true;
    return false;
  }

  dispatch<T>(dispatch: () => T): T {
    return runInScope(this.#scope, dispatch);
  }

  releaseUnsent(): void {
    releaseUnsent(this.#scope);
  }
}

/**
 * A tracker for one `callHttp` call: a child of the current invoke's scope; outside any
 * `invokeTracked`, a child of the scope kept for `signal` (one executor call, one signal); with
 * neither, a scope of its own.
 * @param signal the call's AbortSignal, if any.
 */
export function trackCall(signal: AbortSignal | undefined): SendTracker {
  const invoke = currentScope() ?? (signal === undefined ? undefined : scopeForSignal(signal));
  return new CallTracker(invoke);
}
