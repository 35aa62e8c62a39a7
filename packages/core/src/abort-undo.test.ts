/**
 * Rule 13 as a property over interleavings (issue 20 §1): whatever moment of a call the abort lands on
 * — before its claim, between its claim and its send, between the remote's commit and the outcome
 * write, after it settled — with outcome writes in process or in the background, a second abort or
 * none, and the settling process dying before its undo or not, every effect at the remote of an
 * aborted run ends compensated exactly once (the sweeper's pass finishing what a dead process left),
 * and no step first called after the abort reaches the remote.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { canon } from "./canon.ts";
import { Deadline } from "./deadline.ts";
import { createExecutor } from "./executor.ts";
import type { IntentStore } from "./intent-store.ts";
import { MemoryIntentStore } from "./memory-intent-store.ts";
import { EMBEDDED_ABORT } from "./run-abort.ts";
import { defineTool } from "./tool.ts";

/** An in-memory remote: bookings by reference, cancellations counted per booking. */
function remote() {
  const bookings = new Map<string, { key: string; cancelled: number }>();
  let next = 0;
  return {
    bookings,
    book(key: string) {
      const existing = [...bookings.entries()].find(([, b]) => b.key === key);
      if (existing) return { booking_ref: existing[0] };
      const ref = `B-${++next}`;
      bookings.set(ref, { key, cancelled: 0 });
      return { booking_ref: ref };
    },
    cancel(ref: string) {
      const b = bookings.get(ref);
      if (!b) throw Object.assign(new Error("no such booking"), { status: 404 });
      b.cancelled++;
      return { cancelled: ref };
    },
  };
}

function tools(r: ReturnType<typeof remote>) {
  return [
    defineTool({
      name: "book",
      kind: "idempotent_by_key",
      args: z.object({ item: z.string() }),
      identity: { item: canon.upper },
      timeoutMs: 1000,
      resendWhenAbsent: true,
      keyRetentionMs: 7 * 86_400_000,
      invoke: async (_args, ctx) => r.book(ctx.idempotencyKey),
      probe: async (_args, ctx) => {
        const found = [...r.bookings.entries()].find(([, b]) => b.key === ctx.clientRef);
        return found ? { booking_ref: found[0] } : null;
      },
      compensation: {
        tool: "cancel",
        args: (_a: unknown, result: { booking_ref?: string } | undefined) => ({ ref: result?.booking_ref ?? "" }),
      },
    }),
    defineTool({
      name: "cancel",
      kind: "idempotent_by_key",
      args: z.object({ ref: z.string() }),
      identity: { ref: canon.exact },
      timeoutMs: 1000,
      invoke: async (args) => r.cancel(args.ref),
    }),
  ];
}

/** Where the abort lands relative to the held step's call. */
const PHASES = ["before_claim", "after_claim", "before_write", "after_write"] as const;

/** Holds the first claim or the first SUCCEEDED write of a step, until released; may die after the write. */
function gated(store: IntentStore, phase: (typeof PHASES)[number], dieAfterWrite: boolean) {
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  let reach!: () => void;
  const reached = new Promise<void>((r) => {
    reach = r;
  });
  let held = false;
  const hold = async () => {
    if (held) return;
    held = true;
    reach();
    await released;
  };
  const wrapped = new Proxy(store, {
    get(target, property) {
      if (property === "claim") {
        return async (...args: Parameters<IntentStore["claim"]>) => {
          const original = args[0].tool === "book";
          if (original && phase === "before_claim") await hold();
          const result = await target.claim(...args);
          if (original && phase === "after_claim") await hold();
          return result;
        };
      }
      if (property === "update") {
        return async (...args: Parameters<IntentStore["update"]>) => {
          const succeeded = args[2].status === "SUCCEEDED" && args[2].compensation !== undefined;
          if (succeeded && phase === "before_write") await hold();
          const updated = await target.update(...args);
          if (succeeded && updated && dieAfterWrite) throw new Error("died after the outcome committed");
          return updated;
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store: wrapped, reached, release };
}

describe("rule 13 over interleavings (MemoryIntentStore, fast-check)", () => {
  it("every effect of an aborted run is compensated exactly once; no step first called after the abort is sent", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          before: fc.integer({ min: 0, max: 2 }),
          phase: fc.constantFrom(...PHASES),
          after: fc.integer({ min: 0, max: 2 }),
          background: fc.boolean(),
          secondAbort: fc.boolean(),
          dies: fc.boolean(),
        }),
        async ({ before, phase, after, background, secondAbort, dies }) => {
          const r = remote();
          const base = new MemoryIntentStore();
          // The call's process (it may die right after its outcome write) and another replica that aborts.
          const dieAfterWrite = dies && phase !== "after_write";
          const gate = gated(base, phase === "after_write" ? "before_claim" : phase, dieAfterWrite);
          const options = { tools: tools(r), reserveMs: 10, minCallBudgetMs: 10, probe: { spacingMs: 0, attempts: 1 } };
          const caller = createExecutor({ ...options, store: gate.store, backgroundOutcomes: background });
          const aborter = createExecutor({ ...options, store: base });
          const runId = "run-p";
          const call = (ex: typeof caller, i: number) =>
            ex.call({ runId, stepId: `s${i}`, tool: "book", args: { item: `i${i}` }, deadline: Deadline.after(5_000) });
          for (let i = 0; i < before; i++) await call(aborter, i);
          let held: Promise<unknown> | null = null;
          if (phase === "after_write") {
            await call(aborter, before);
          } else {
            held = call(caller, before).catch(() => null);
            await gate.reached;
          }
          await aborter.abortRun(runId, Deadline.after(5_000), EMBEDDED_ABORT);
          gate.release();
          await held;
          // The agent goes on after the abort answered: none of these may reach the remote.
          const bookedBeforeNext = r.bookings.size;
          for (let i = 0; i < after; i++) await call(caller, before + 1 + i);
          expect(r.bookings.size).toBe(bookedBeforeNext);
          await caller.undosDone();
          await aborter.undosDone();
          // Without a death, whoever settled the step undid it: nobody aborted again, no sweeper ran.
          if (!dieAfterWrite) for (const [ref, b] of r.bookings) expect(b.cancelled, `booking ${ref}`).toBe(1);
          if (secondAbort) await aborter.abortRun(runId, Deadline.after(5_000));
          await aborter.undoAbortedSteps({ graceMs: 0 });
          for (const [ref, b] of r.bookings) expect(b.cancelled, `booking ${ref}`).toBe(1);
          const expected = before + 1 - (phase === "before_claim" ? 1 : 0);
          expect(r.bookings.size).toBe(expected);
        },
      ),
      { numRuns: 60 },
    );
  });
});
