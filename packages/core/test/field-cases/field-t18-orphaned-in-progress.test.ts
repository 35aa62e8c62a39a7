/**
 * T18 — An orphaned "in progress" lock blocks retries for days (express-idempotency).
 * Source: https://github.com/VilledeMontreal/express-idempotency/issues/32 (fixed by #43).
 *
 * Remote (the shared fake remote, honouring keys; `POST /effects` stands for `POST /bookings`).
 * Probe by key. The "crash" is a tool hook in the first executor that never settles: (A) right
 * after the remote committed the booking, before any response is handled; (B) after the intent
 * record was written, before any request byte. That executor never writes again, like a killed
 * process; its record stays PENDING.
 *
 * Scale: 1 case-second = 20 ms.
 * Differences by design:
 * - The lease is the crashed call's deadline (30 s here), not a 30 s lease renewed every 10 s.
 * - The executor's first probe runs at once (+0 s), then +1, +3 (not +1, +2, +4).
 * - (B): our envelope's `attempt` is 2 after the recovery send (a resend increments it); the
 *   case's `attempts:1` counts mutating requests sent, which is the remote's `posts` (1).
 * Recovery runs both ways the case allows: the sweeper (`sweepStale`) and a repeat `call`.
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { createExecutor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { canonicalIdentity, idempotencyKey } from "../../src/idempotency-key.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { sweepStale } from "../../src/sweeper.ts";
import { defineTool } from "../../src/tool.ts";
import { eventsOf, never, probeByClientRef, scaledOptions, Timeline, waitFor } from "./support.ts";

const S = 20;
let remote: FakeRemote;
let store: MemoryIntentStore;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: true });
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

type Crash = "after-send" | "before-send" | null;

function bookingTool(crash: Crash) {
  return defineTool({
    name: "booking.create",
    kind: "idempotent_by_key",
    identity: { venueId: canon.upper, slot: canon.exact, partyRef: canon.upper },
    timeoutMs: 10 * S,
    invoke: async (args, ctx) => {
      if (crash === "before-send") return never();
      const post = callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: args });
      if (crash === "after-send") {
        post.catch(() => {}); // the dead process never reads it
        await waitFor(() => remote.effects.length === 1);
        return never();
      }
      return (await post).body;
    },
    probe: (_args, ctx) => probeByClientRef(remote.url, ctx),
  });
}

const args = { venueId: "VEN-01", slot: "2025-01-01T10:00Z", partyRef: "PARTY-0001" };
/** The orphan's key: the executor derives it from run, step, tool and identity. */
const orphan = idempotencyKey("run-18", "book", "booking.create", canonicalIdentity(args, bookingTool(null).identity));

describe("field-t18-orphaned-in-progress", () => {
  for (const recovery of ["sweeper", "call"] as const) {
    it(`(A) crash after the remote committed; restart at t=31, recovery by ${recovery}: probe finds it → SUCCEEDED, no resend`, async () => {
      const tl = new Timeline(S);
      const dead = createExecutor({ store, tools: [bookingTool("after-send")], ...scaledOptions(S) });
      remote.fault({ answer: "hang" });
      tl.start();
      const call = () => ({ runId: "run-18", stepId: "book", tool: "booking.create", args });
      void dead.call({ ...call(), deadline: tl.deadline(30) }); // never settles: the process died
      await waitFor(() => remote.effects.length === 1);
      expect((await store.get(orphan))?.status).toBe("PENDING");

      await tl.until(31); // the lease (the call's 30 s deadline) has expired
      const executor = createExecutor({ store, tools: [bookingTool(null)], ...scaledOptions(S) });
      const env =
        recovery === "sweeper"
          ? (await sweepStale({ store, executor })).results[0]?.envelope
          : await executor.call({ ...call(), deadline: tl.deadline(20) });
      // (the case's "by t=31+8" is a speed figure, not asserted: speed is measured by benchmarks)

      expect(env).toMatchObject({ status: "SUCCEEDED", attempt: 1, resolution: "found", idempotency_key: orphan });
      expect(remote.posts).toBe(1); // never resent before (or after) probing
      expect(remote.effects).toHaveLength(1);
      const events = (await eventsOf(store, orphan)).map((e) => e.type);
      expect(events).toContain("lease_expired");
      expect(events).not.toContain("resend");
      expect((await store.get(orphan))?.status).toBe("SUCCEEDED");
    });

    it(`(B) crash before any byte was sent; restart at t=31, recovery by ${recovery}: three absent probes, one send with K`, async () => {
      const tl = new Timeline(S);
      const dead = createExecutor({ store, tools: [bookingTool("before-send")], ...scaledOptions(S) });
      tl.start();
      const call = () => ({ runId: "run-18", stepId: "book", tool: "booking.create", args });
      void dead.call({ ...call(), deadline: tl.deadline(30) });
      await waitFor(async () => (await store.get(orphan)) !== null);
      expect((await store.get(orphan))?.status).toBe("PENDING");
      expect(remote.requests).toHaveLength(0);

      await tl.until(31);
      const executor = createExecutor({ store, tools: [bookingTool(null)], ...scaledOptions(S) });
      const env =
        recovery === "sweeper"
          ? (await sweepStale({ store, executor })).results[0]?.envelope
          : await executor.call({ ...call(), deadline: tl.deadline(20) });
      // (the case's "by t=31+8" is a speed figure, not asserted: speed is measured by benchmarks)

      expect(env).toMatchObject({
        status: "SUCCEEDED",
        attempt: 2,
        resolution: "absent_resent",
        idempotency_key: orphan,
      });
      const probes = await eventsOf(store, orphan, "probe");
      expect(probes.map((p) => p.data.answer)).toEqual(["absent", "absent", "absent"]);
      expect(remote.posts).toBe(1);
      expect(remote.keysSeen).toEqual([orphan]);
      expect(remote.effects).toHaveLength(1);
    });
  }
});
