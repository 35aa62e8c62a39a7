/**
 * Condition events reach a receiver (issue 23 §3), on a real PostgreSQL test database with a real
 * HTTP receiver and the cadence shortened by its setting (`TRISTATE_NOTIFY_CONDITIONS_INTERVAL_MS`):
 * a tool's UNKNOWN share over the threshold (`unknown_share`, read from the minute rollups) and stale
 * PENDING records (`stale_pending`) each reach a webhook once per start — edge-triggered: none while
 * the condition lasts over many checks, a new one after it ended and started again.
 */
import { Deadline } from "@tristate/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  eventually,
  type HttpReceiver,
  limbo,
  notifyEnv,
  signatureValid,
  startHttpReceiver,
} from "./notifications-support.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

const CHECK_MS = 200;
let stack: TestStack;
let hook: HttpReceiver;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  hook = await startHttpReceiver();
  stack = await startStack({
    tools: () => [limbo],
    env: {
      ...notifyEnv(),
      TRISTATE_NOTIFY_GROUP_WINDOW_MS: "0",
      TRISTATE_NOTIFY_CONDITIONS_INTERVAL_MS: String(CHECK_MS),
      TRISTATE_ROLLUP_INTERVAL_MS: "200",
    },
  });
});
afterAll(async () => {
  await stack?.close();
  await hook?.close();
});

/** The events of `kind` of `tenant` the receiver got (each signed with `secret`). */
function received(tenant: string, kind: string, secret: string): Json[] {
  return hook.arrivals
    .map((a) => ({ a, json: JSON.parse(a.body) as Json }))
    .filter(({ json }) => json.tenant === tenant && json.type === kind)
    .flatMap(({ a, json }) => {
      expect(signatureValid(secret, a.headers["tristate-signature"] as string, a.body)).toBe(true);
      return json.events as Json[];
    });
}

async function webhookChannel(tenant: string): Promise<string> {
  await stack.post("keys.create", { name: `${tenant} agent`, role: "agent", tenant }, stack.keys.admin);
  const res = await stack.post(
    "notifications.channels.create",
    { tenant, kind: "webhook", name: "conditions", url: hook.url, events: ["unknown_share", "stale_pending"] },
    stack.keys.admin,
  );
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.result.data.secret;
}

describe("condition events reach a webhook, once per start", () => {
  it("unknown_share: a tool whose calls end UNKNOWN over the threshold (≥ 20 calls) — one event while it lasts", async () => {
    const secret = await webhookChannel("shares");
    const executor = stack.service.services.tenants.executor("shares");
    for (let i = 0; i < 25; i++) {
      await executor.call({
        runId: "r",
        stepId: `u-${i}`,
        tool: "limbo",
        args: { id: `u-${i}` },
        deadline: Deadline.after(10_000),
      });
    }
    // The share is read from the minute rollups, which seal the log 20 s behind (SEAL_MARGIN_MS): the
    // calls are dated 40 s ago, as if made then, so the test need not wait out the margin.
    await stack.service.services.store.pool.query(
      `UPDATE intent_records SET created_at = created_at - interval '40 seconds' WHERE tenant = 'shares'`,
    );
    const [event] = await eventually(
      () => {
        const got = received("shares", "unknown_share", secret);
        return got.length > 0 ? got : undefined;
      },
      20_000,
      "the unknown_share event",
    );
    expect(event.kind).toBe("unknown_share");
    expect(event.subject).toMatchObject({ tool: "limbo", threshold: 0.05, windowMs: 900_000 });
    expect(event.subject.calls).toBeGreaterThanOrEqual(20);
    expect(event.subject.share).toBeGreaterThan(0.05);
    // The condition lasts (the calls stay in the window): many checks later, still one event.
    await sleep(CHECK_MS * 8);
    expect(received("shares", "unknown_share", secret)).toHaveLength(1);
  });

  it("stale_pending: one event when stale PENDING records appear, none while they stay, a new one after they ended and came back", async () => {
    const secret = await webhookChannel("stale");
    const executor = stack.service.services.tenants.executor("stale");
    await executor.call({
      runId: "r",
      stepId: "s-1",
      tool: "limbo",
      args: { id: "s-1" },
      deadline: Deadline.after(10_000),
    });
    const pool = stack.service.services.store.pool;
    // A process died mid-call: the record is PENDING past its lease (no sweeper runs in this stack).
    const goStale = () =>
      pool.query(
        `UPDATE intent_records SET status = 'PENDING', lease_until_at = now() - interval '1 minute',
           recheck_at = now() - interval '1 minute' WHERE tenant = 'stale' AND step_id = 's-1'`,
      );
    await goStale();
    const first = await eventually(
      () => {
        const got = received("stale", "stale_pending", secret);
        return got.length > 0 ? got : undefined;
      },
      10_000,
      "the stale_pending event",
    );
    expect(first[0].subject).toMatchObject({ count: 1 });
    await sleep(CHECK_MS * 8);
    expect(received("stale", "stale_pending", secret)).toHaveLength(1);
    // It ends (reconciled), then happens again: a new event, with a new id.
    await pool.query(`UPDATE intent_records SET status = 'UNKNOWN' WHERE tenant = 'stale' AND step_id = 's-1'`);
    await sleep(CHECK_MS * 4);
    expect(received("stale", "stale_pending", secret)).toHaveLength(1);
    await goStale();
    const both = await eventually(
      () => {
        const got = received("stale", "stale_pending", secret);
        return got.length >= 2 ? got : undefined;
      },
      10_000,
      "the second stale_pending event",
    );
    expect(both).toHaveLength(2);
    expect(both[1].id).not.toBe(both[0].id);
  });
});
