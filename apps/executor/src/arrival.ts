/**
 * When a request arrived (issue 21 §1): a call's `budgetMs` (and the default budget) counts from the
 * moment the server first saw the request, not from when its procedure starts — the key check, a
 * database read, is part of the budget, never free time.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { IncomingMessage } from "node:http";
import { DEFAULT_RESERVE_MS } from "@tristate/core";

/** The moment a request arrived, on both clocks. */
export interface Arrival {
  /** Wall clock, epoch ms (the executor's clock). */
  readonly epochMs: number;
  /** `performance.now()` at arrival, ms (monotonic: immune to wall-clock steps). */
  readonly monotonicMs: number;
}

/** An arrival now. @param nowEpochMs the executor's wall clock now, epoch ms (default `Date.now()`). */
export function arrivalNow(nowEpochMs: number = Date.now()): Arrival {
  return { epochMs: nowEpochMs, monotonicMs: performance.now() };
}

/** Milliseconds since `arrival` (monotonic, never negative). */
export function sinceArrivalMs(arrival: Arrival): number {
  return Math.max(0, performance.now() - arrival.monotonicMs);
}

const arrivals = new WeakMap<IncomingMessage, Arrival>();

/** Records that `req` arrived now (the first time only) and returns its arrival. */
export function markArrival(req: IncomingMessage, nowEpochMs: number): Arrival {
  let arrival = arrivals.get(req);
  if (!arrival) {
    arrival = arrivalNow(nowEpochMs);
    arrivals.set(req, arrival);
  }
  return arrival;
}

/** The arrival {@link markArrival} recorded for `req`; now when none was (a request built in a test). */
export function arrivalOf(req: IncomingMessage, nowEpochMs: number): Arrival {
  return arrivals.get(req) ?? arrivalNow(nowEpochMs);
}

/**
 * The arrival of the MCP request being served, for code the MCP SDK calls back (a `tools/call`
 * handler) without the HTTP request: http.ts runs each request's handling inside it.
 */
export const mcpRequestArrival = new AsyncLocalStorage<Arrival>();

/** What a request says of its turn: a deadline, epoch ms, or a budget from arrival, ms (neither: the default). */
export interface TurnHint {
  deadlineEpochMs?: number | undefined;
  budgetMs?: number | undefined;
}

/**
 * Least time a key check is given, ms, even when the turn has less than the reserve left: the call
 * is refused by its deadline anyway, and this keeps that answer an envelope rather than a 503.
 */
const MIN_KEY_CHECK_MS = 200;

/**
 * How long the work before a call's own deadline handling (the key check) may take, ms: what is left
 * of the turn at `arrival`, minus `reserveMs`, at least {@link MIN_KEY_CHECK_MS}. A hint that is not
 * a usable number (the procedure refuses it later) counts as absent: the default budget. A batch's
 * calls (a list of hints, one per call) are bounded by the tightest of them (an empty list: the default).
 * @param limits `TRISTATE_MAX_BUDGET_MS` and `TRISTATE_DEFAULT_BUDGET_MS`, ms.
 * @param reserveMs time kept back for the answer, ms (default `DEFAULT_RESERVE_MS`, 2000).
 */
export function preCallBoundMs(
  arrival: Arrival,
  hint: TurnHint | readonly TurnHint[],
  limits: { maxBudgetMs: number; defaultBudgetMs: number },
  reserveMs: number = DEFAULT_RESERVE_MS,
): number {
  const usable = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v > 0;
  const turnMsOf = (h: TurnHint) => {
    if (usable(h.deadlineEpochMs)) return h.deadlineEpochMs - arrival.epochMs;
    if (usable(h.budgetMs)) return h.budgetMs;
    return limits.defaultBudgetMs;
  };
  const hints: readonly TurnHint[] = Array.isArray(hint) ? hint : [hint as TurnHint];
  const turnMs = hints.length > 0 ? Math.min(...hints.map(turnMsOf)) : limits.defaultBudgetMs;
  const leftMs = Math.min(turnMs, limits.maxBudgetMs) - sinceArrivalMs(arrival) - reserveMs;
  return Math.max(MIN_KEY_CHECK_MS, leftMs);
}

/** Thrown by {@link within} when the work did not finish in time. */
export class NotInTimeError extends Error {
  override readonly name = "NotInTimeError";
  /** The bound that passed, ms. */
  readonly boundMs: number;
  constructor(what: string, boundMs: number) {
    super(`${what} did not finish within ${Math.round(boundMs)} ms`);
    this.boundMs = boundMs;
  }
}

/**
 * `work`, or a {@link NotInTimeError} once `boundMs` passed (the work itself goes on; its late result
 * or failure is dropped).
 * @throws NotInTimeError after `boundMs`; whatever `work` throws before.
 */
export async function within<T>(work: Promise<T>, boundMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NotInTimeError(what, boundMs)), Math.max(0, boundMs));
  });
  work.catch(() => {}); // a failure after the bound passed is not an unhandled rejection
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
