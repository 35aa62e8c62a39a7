// Rule 9 for operator actions: a replica whose clock runs 5 s ahead must not judge a PENDING record
// whose lease is still live by the database's clock as over — no resend beside the call in flight,
// no "it did not happen" or "it happened" while the call has not answered (attack review of issue 19).
import { Deadline, type Envelope } from "@tristate/core";
import { refundTool, startFakeRemote } from "@tristate/testing";
import { afterEach, describe, expect, it } from "vitest";
import { Cleanup, sleep, waitUntil } from "./helpers.ts";
import { freshStores, refund, skewedClock, timingExecutor } from "./reconciliation-timing.support.ts";

describe("operator actions judge a lease by the database's clock (rule 9), replica +5 s", () => {
  const cleanup = new Cleanup();
  afterEach(() => cleanup.run());
  for (const action of ["resend_same_key", "confirm_no_effect", "confirm_effect"] as const) {
    it(`${action} on a PENDING record whose call is in flight is refused; the remote sees one effect`, async () => {
      const { store, ops } = await freshStores(cleanup);
      const remote = cleanup.add(await startFakeRemote({ honorsKey: false }), (r) => r.close());
      const tool = refundTool(remote, { kind: "unsafe", probe: undefined, timeoutMs: 9000 });
      const owner = timingExecutor(store, [tool]);
      const ahead = timingExecutor(store, [tool], { clock: skewedClock(5000) });
      remote.fault({ respondDelayMs: 8000 });
      const input = { runId: `run-${action}`, stepId: "refund", tool: "issue_refund", args: refund("ORD-1") };
      const key = owner.keyFor(input);
      const call: Promise<Envelope> = owner.call({ ...input, deadline: Deadline.after(9500, owner.clock) });
      await waitUntil(() => remote.posts === 1, "the owner's request");
      const record = (await store.get(key))!;
      // Until the lease has under 3.5 s left by the database's clock: past it by the replica's.
      while (record.leaseUntilEpochMs - (await store.clockEpochMs()) > 3500) await sleep(100);
      expect(record.leaseUntilEpochMs).toBeLessThan(ahead.clock.nowEpochMs());
      const attempt = ahead.resolve(
        {
          key,
          action,
          note: "replica ahead",
          expectedVersion: record.version,
          operatorActionId: `ahead-${action}`,
          actor: { keyId: "k", name: "op" },
        },
        ops,
      );
      await expect(attempt).rejects.toMatchObject({ code: "NOT_WAITING" });
      const envelope = await call;
      expect(envelope.status).toBe("SUCCEEDED");
      expect(remote.effects).toHaveLength(1);
      const settled = (await store.get(key))!;
      expect({ status: settled.status, resolution: settled.resolution }).toEqual({
        status: "SUCCEEDED",
        resolution: null,
      });
    }, 30_000);
  }
});
