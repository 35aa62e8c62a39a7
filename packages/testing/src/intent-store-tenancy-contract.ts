import { randomBytes } from "node:crypto";
import type { IntentStore, NewIntentRecord } from "@tristate/core";
import { expect, it } from "vitest";

const NOW = 1_760_000_000_000;

/**
 * Tenancy part of the {@link IntentStore} contract (issue 10): two views of one log, confined to two
 * tenants, never see or touch each other's records, events, plans or stale records, and the same
 * (run, step, tool) — even the same key — is a separate record in each. Registered by
 * `describeIntentStoreContract` for stores that implement `forTenant`.
 * @param stores - returns the store under test (tenant `default`) for the running test.
 */
export function describeTenancyContract(stores: () => IntentStore): void {
  it("tenants are isolated: same run/step/tool and key in two tenants are two records; no read crosses", async () => {
    const mine = stores();
    if (!mine.forTenant) throw new Error("the store must implement forTenant");
    const theirs = mine.forTenant("acme-2");
    expect(mine.tenant ?? "default").toBe("default");
    expect(theirs.tenant).toBe("acme-2");
    const key = randomBytes(16).toString("hex");
    const base: NewIntentRecord = {
      key,
      runId: `run-${key.slice(0, 8)}`,
      stepId: "step-1",
      tool: "refund",
      args: { order_id: "A-1" },
      identity: { order_id: "A-1" },
      attempt: 1,
      leaseUntilEpochMs: NOW - 1,
      compensation: null,
      createdAtEpochMs: NOW - 10,
      traceId: null,
    };
    const a = await mine.claim(base, [{ key, type: "created", atEpochMs: NOW - 10, data: { who: "mine" } }], NOW - 10);
    const b = await theirs.claim(
      base,
      [{ key, type: "created", atEpochMs: NOW - 10, data: { who: "theirs" } }],
      NOW - 10,
    );
    expect(a.claimed && b.claimed).toBe(true);
    expect(a.claimed && a.record.tenant).toBe("default");
    expect(b.claimed && b.record.tenant).toBe("acme-2");
    // A second (run, step, tool) of the other tenant under a new key still loses only within its tenant.
    const again = await theirs.claim({ ...base, key: randomBytes(16).toString("hex") }, [], NOW);
    expect(again.claimed).toBe(false);
    expect(!again.claimed && again.existing.tenant).toBe("acme-2");

    const upd = await theirs.update(key, 1, { status: "SUCCEEDED", result: { refund: "r-2" } }, [], NOW);
    expect(upd?.status).toBe("SUCCEEDED");
    expect((await mine.get(key))?.status).toBe("PENDING");
    expect((await mine.get(key))?.result).toBeUndefined();
    expect((await mine.listEvents(key)).map((e) => e.data)).toStrictEqual([{ who: "mine" }]);
    expect((await theirs.listEvents(key)).map((e) => e.data)).toStrictEqual([{ who: "theirs" }]);
    expect((await mine.listByRun(base.runId)).map((r) => r.tenant)).toStrictEqual(["default"]);
    expect(await mine.listByIdentity("refund", { order_id: "A-1" }, NOW - 60_000, "none")).toHaveLength(1);

    await theirs.savePlan(base.runId, [{ stepId: "s", tool: "refund" }], NOW);
    expect(await mine.getPlan(base.runId)).toBeNull();
    expect(await theirs.getPlan(base.runId)).toStrictEqual([{ stepId: "s", tool: "refund" }]);

    // The other tenant's stale record is not this tenant's sweeper's business, and vice versa.
    const third = theirs.forTenant?.("acme-3");
    expect(await third?.claimStale({ nowEpochMs: NOW, limit: 10, leaseUntilEpochMs: NOW + 60_000 })).toStrictEqual([]);
    const swept = await mine.claimStale({ nowEpochMs: NOW, limit: 10, leaseUntilEpochMs: NOW + 60_000 });
    expect(swept.map((r) => [r.tenant, r.key])).toStrictEqual([["default", key]]);
    // A record of another tenant is refused, never written into this one.
    await expect(mine.claim({ ...base, tenant: "acme-2", stepId: "step-9" }, [], NOW)).rejects.toThrow(/tenant/);
    expect(await mine.listByRun(base.runId)).toHaveLength(1);
  });
}
