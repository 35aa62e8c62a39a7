/**
 * One scope of the invoke tracker (invoke-tracker.ts): what an invoke, or one `callHttp` request
 * inside it, started and wrote. Internal to the package; re-exported by invoke-tracker.ts.
 */
import type { RequestAttempt } from "./repeat-guard.ts";

/**
 * What one scope (an invoke, or one `callHttp` request inside it) saw. Every event is applied to
 * the scope the request was attributed to and to all its ancestors, so a nested scope's writes
 * also mark the enclosing invoke. Internal to the package: read it through {@link invokeTracked}.
 */
export class IoScope {
  /** The enclosing scope, if any. */
  readonly parent: IoScope | undefined;
  /** True once any request or TCP socket was started in this scope. */
  ioStarted = false;
  /** Requests whose head was written (undici) or whose socket connected (node:http). */
  writes = 0;
  /** undici requests created in this scope (whether or not written). */
  undiciRequests = 0;
  /** Requests started in this scope that are neither written nor finished yet. */
  readonly unsettled = new Set<object>();
  /** Every HTTP request started in this scope, in order (repeat-guard.ts). */
  readonly attempts: RequestAttempt[] = [];
  /**
   * Refuse a repeat of a written request before its head is written (issue 21 §2): set on the scope
   * of an invoke whose tool's remote does not dedupe a key.
   */
  refuseRepeats = false;

  constructor(parent: IoScope | undefined) {
    this.parent = parent;
  }

  /** Whether anything was, or may still be, written in this scope. */
  get maybeWritten(): boolean {
    return this.writes > 0 || this.unsettled.size > 0;
  }
}
