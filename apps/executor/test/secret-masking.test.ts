/**
 * Issue 10, API hardening: fields a tool marks secret (`secretFields`) are masked by the server for
 * every role but admin, on every read procedure, over the real HTTP API on PostgreSQL; the database
 * row keeps the real value (a resend needs it), and stored errors and events never hold it.
 */
import { randomUUID } from "node:crypto";
import { canon, defineTool, RejectedError } from "@tristate/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { appRouter } from "../src/trpc/router.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

const CARD = "4111111111111111";
const MASKED = "***1111";
const CVV = "737";

/** The in-process remote of the card tool: what the next charge does, and whether lookups see it. */
const remote = { mode: "ok" as "ok" | "reset" | "decline", visible: false };

function cardTools() {
  const args = z.object({ order_id: z.string(), amount: z.string(), card_number: z.string(), cvv: z.string() });
  return [
    defineTool({
      name: "charge_card",
      kind: "unsafe",
      args,
      identity: { order_id: canon.upper, card_number: canon.trim },
      timeoutMs: 1000,
      secretFields: ["card_number", "cvv"],
      loggableFields: ["order_id"],
      describe: (a) => `charge of ${a.amount} on card ${a.card_number} for order ${a.order_id}`,
      invoke: async (a) => {
        if (remote.mode === "decline") {
          throw new RejectedError(`card ${a.card_number} (${encodeURIComponent(a.card_number)}) declined`, {
            httpStatus: 402,
          });
        }
        if (remote.mode === "reset") throw new Error(`socket reset while charging card ${a.card_number} cvv ${a.cvv}`);
        // The remote echoes the card, as many do.
        return { id: `ch_${a.order_id}`, card_number: a.card_number, note: `charged ${a.card_number}` };
      },
      probe: async (a) => (remote.visible ? { id: `ch_${a.order_id}`, card: a.card_number } : null),
      compensation: {
        tool: "refund_card",
        args: (a, r) => ({ charge_id: (r as { id?: string } | undefined)?.id ?? "", card_number: a.card_number }),
      },
    }),
    defineTool({
      name: "refund_card",
      kind: "idempotent_by_key",
      args: z.object({ charge_id: z.string(), card_number: z.string() }),
      identity: { charge_id: canon.exact },
      timeoutMs: 1000,
      secretFields: ["card_number"],
      invoke: async (a) => ({ refunded: a.charge_id }),
    }),
  ];
}

let stack: TestStack;
const runId = `run-${randomUUID()}`;
const keys: Record<string, string> = {};

const charge = (stepId: string, orderId: string) =>
  stack.post("calls.execute", {
    runId,
    stepId,
    tool: "charge_card",
    args: { order_id: orderId, amount: "10.00", card_number: CARD, cvv: CVV },
    budgetMs: 20_000,
  });

beforeAll(async () => {
  stack = await startStack({
    tools: () => cardTools(),
    env: { TRISTATE_PROBE_SPACING_MS: "0", TRISTATE_PROBE_ATTEMPTS: "1" },
  });
  const ok = await charge("pay", "A-1");
  expect(ok.json.result.data).toMatchObject({ status: "SUCCEEDED" });
  keys.ok = ok.json.result.data.idempotency_key;
  // The calling agent gets its own envelope unmasked, as before.
  expect(ok.json.result.data.result.card_number).toBe(CARD);

  remote.mode = "reset";
  const unknown = await charge("pay-2", "A-2");
  expect(unknown.json.result.data).toMatchObject({ status: "UNKNOWN" });
  keys.queued = unknown.json.result.data.idempotency_key;

  remote.mode = "decline";
  const declined = await charge("pay-4", "A-4");
  expect(declined.json.result.data).toMatchObject({ status: "FAILED_NO_EFFECT" });
  keys.declined = declined.json.result.data.idempotency_key;

  remote.mode = "ok";
  const stale = await charge("pay-3", "A-3");
  keys.stale = stale.json.result.data.idempotency_key;
  // A PENDING record past its deadline, for stale.list. Its outcome is written in the background: let it
  // land first, or that (version-checked) write overwrites the row rewritten here by hand.
  await stack.service.services.tenants.outcomesWritten();
  await stack.service.services.store.prisma.intentRecord.update({
    where: { tenant_key: { tenant: "default", key: keys.stale! } },
    data: { status: "PENDING", leaseUntil: new Date(Date.now() - 60_000), recheckAt: new Date(Date.now() - 60_000) },
  });
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

/** Every non-admin read answer: no form of the card or CVV, and the masked form where the card was. */
function expectMasked(answer: { status: number; json: Json }, where: string): void {
  expect(answer.status, where).toBe(200);
  const text = JSON.stringify(answer.json);
  expect(text, where).not.toContain(CARD);
  expect(text, where).not.toContain("4111 1111");
  expect(text, where).not.toMatch(/(?<![0-9])737(?![0-9])/);
  expect(text, where).toContain(MASKED);
}

function expectClear(answer: { status: number; json: Json }, where: string): void {
  expect(answer.status, where).toBe(200);
  expect(JSON.stringify(answer.json), where).toContain(CARD);
}

/** The read procedures, each as the role would call it. */
const reads: [string, (key: string) => Promise<{ status: number; json: Json }>][] = [
  ["intents.get", (k) => stack.get("intents.get", { key: keys.ok }, k)],
  ["intents.list", (k) => stack.get("intents.list", { filters: { runId } }, k)],
  ["intents.byIdentity", (k) => stack.get("intents.byIdentity", { value: "A-1" }, k)],
  ["runs.get", (k) => stack.get("runs.get", { runId }, k)],
  ["stale.list", (k) => stack.get("stale.list", {}, k)],
  ["queue.list", (k) => stack.get("queue.list", undefined, k)],
  ["calls.get", (k) => stack.get("calls.get", { key: keys.ok }, k)],
  ["calls.get (queued)", (k) => stack.get("calls.get", { key: keys.queued }, k)],
  ["intents.get (queued)", (k) => stack.get("intents.get", { key: keys.queued }, k)],
];

describe("secret fields over HTTP on PostgreSQL", () => {
  it("a viewer and an operator see the card masked on every read procedure; an admin sees it", async () => {
    for (const [name, read] of reads) {
      expectMasked(await read(stack.keys.viewer), `${name} as viewer`);
      expectMasked(await read(stack.keys.operator), `${name} as operator`);
      expectClear(await read(stack.keys.admin), `${name} as admin`);
    }
  });

  it("masks at the argument's path, in the identity, the result, the compensation and the effect", async () => {
    const detail = (await stack.get("intents.get", { key: keys.ok }, stack.keys.viewer)).json.result.data;
    expect(detail.record.args).toEqual({ order_id: "A-1", amount: "10.00", card_number: MASKED, cvv: "***" });
    expect(detail.record.identity).toMatchObject({ order_id: "A-1", card_number: MASKED });
    expect(detail.record.result).toEqual({ id: "ch_A-1", card_number: MASKED, note: `charged ${MASKED}` });
    expect(detail.record.compensation.args).toEqual({ charge_id: "ch_A-1", card_number: MASKED });
    const queue = (await stack.get("queue.list", undefined, stack.keys.viewer)).json.result.data.items;
    expect(queue.find((i: Json) => i.key === keys.queued).effect).toBe(
      `charge of 10.00 on card ${MASKED} for order A-2`,
    );
  });

  it("intents.byIdentity does not tell a viewer or an operator which card numbers exist; an admin finds the card", async () => {
    for (const key of [stack.keys.viewer, stack.keys.operator]) {
      const res = await stack.get("intents.byIdentity", { value: CARD }, key);
      expect(res.status).toBe(200);
      expect(res.json.result.data.items).toEqual([]);
      expect(JSON.stringify(res.json)).not.toContain("ch_A-1");
    }
    const admin = (await stack.get("intents.byIdentity", { value: CARD }, stack.keys.admin)).json.result.data;
    expect(admin.items.length).toBeGreaterThan(0);
    expect(admin.items[0].matchedFields).toEqual(["card_number"]);
  });

  it("calls.get masks for the agent that made the call too", async () => {
    expectMasked(await stack.get("calls.get", { key: keys.ok }, stack.keys.agent), "calls.get as agent");
  });

  it("probe.rerun, queue.resolve and audit.list mask for an operator and a viewer; an admin sees the card", async () => {
    remote.visible = true;
    const rerun = await stack.post("probe.rerun", { key: keys.queued }, stack.keys.operator);
    expectMasked(rerun, "probe.rerun as operator");
    expect(rerun.json.result.data.probes[0]).toMatchObject({ answer: "found", found: { card: MASKED } });
    expectClear(await stack.post("probe.rerun", { key: keys.queued }, stack.keys.admin), "probe.rerun as admin");

    const version = (await stack.get("calls.get", { key: keys.queued }, stack.keys.admin)).json.result.data.version;
    const resolved = await stack.post(
      "queue.resolve",
      {
        key: keys.queued,
        action: "confirm_effect",
        note: `found the charge on card ${CARD}`,
        expectedVersion: version,
        operatorActionId: randomUUID(),
      },
      stack.keys.operator,
    );
    expectMasked(resolved, "queue.resolve as operator");
    // The note is stored with the secret redacted (its event and audit row), for every reader.
    expect(resolved.json.result.data.audit.note).toBe("found the charge on card {card_number}");

    expectMasked(await stack.get("audit.list", {}, stack.keys.viewer), "audit.list as viewer");
    expectMasked(await stack.get("audit.list", {}, stack.keys.operator), "audit.list as operator");
    const audit = await stack.get("audit.list", {}, stack.keys.admin);
    expectClear(audit, "audit.list as admin");
    expect(audit.json.result.data.entries[0].before.args.card_number).toBe(CARD);
  });

  it("the database row still holds the real arguments; stored errors and events never hold the card", async () => {
    const prisma = stack.service.services.store.prisma;
    for (const key of [keys.ok, keys.queued]) {
      const row = await prisma.intentRecord.findUniqueOrThrow({
        where: { tenant_key: { tenant: "default", key: key! } },
      });
      expect(row.args).toMatchObject({ card_number: CARD, cvv: CVV });
    }
    const events = await prisma.intentEvent.findMany({ where: { key: keys.queued } });
    expect(events.map((e) => e.type)).toContain("human_action");
    const audit = await prisma.auditEntry.findMany({ where: { key: keys.queued } });
    expect(audit).toHaveLength(1);
    // The audit's before/after snapshots are copies of the record (args included, masked on read);
    // their error messages, the note and every event are text about the call: no secret in them.
    const stored = JSON.stringify([
      events.map((e) => e.data),
      audit.map((a) => [a.note, (a.before as Json).error, (a.after as Json).error]),
    ]);
    // The decline's message as stored, and the operator's note, redacted.
    const declined = await prisma.intentRecord.findUniqueOrThrow({
      where: { tenant_key: { tenant: "default", key: keys.declined! } },
    });
    expect(declined.args).toMatchObject({ card_number: CARD });
    expect((declined.error as Json).message).toContain("card {card_number} ({card_number}) declined");
    expect(JSON.stringify(declined.error)).not.toContain(CARD);
    expect(audit[0]?.note).toBe("found the charge on card {card_number}");
    expect(stored).not.toContain(CARD);
    expect(stored).not.toMatch(/(?<![0-9])737(?![0-9])/);
  });

  it("runs.operatorAbort: the abort report (compensation envelopes, messages) is masked for an operator", async () => {
    const run = `run-abort-${randomUUID()}`;
    const charged = await stack.post("calls.execute", {
      runId: run,
      stepId: "pay",
      tool: "charge_card",
      args: { order_id: "AB-1", amount: "10.00", card_number: CARD, cvv: CVV },
      budgetMs: 20_000,
    });
    expect(charged.json.result.data).toMatchObject({ status: "SUCCEEDED" });
    const aborted = await stack.post(
      "runs.operatorAbort",
      { runId: run, note: "customer cancelled" },
      stack.keys.operator,
    );
    expect(aborted.status, JSON.stringify(aborted.json)).toBe(200);
    const report = aborted.json.result.data;
    expect(report.steps[0]).toMatchObject({ stepId: "pay", outcome: "compensated" });
    expect(report.steps[0].message).toContain("***1111");
    expect(JSON.stringify(report)).not.toContain(CARD);
    // Its audit entry is stored masked (note and report), so every reader of audit.list sees it masked.
    const rows = await stack.service.services.store.prisma.auditEntry.findMany({ where: { key: `run:${run}` } });
    expect(rows).toHaveLength(1);
    expect(rows[0]?.note).toBe("customer cancelled");
    const stored = JSON.stringify(rows.map((r) => [r.note, r.before, r.after]));
    expect(stored).not.toContain(CARD);
    expect(stored).toContain("***1111");
    for (const key of [stack.keys.viewer, stack.keys.admin]) {
      const audit = await stack.get("audit.list", { action: "abort_run" }, key);
      expect(audit.status).toBe(200);
      expect(audit.json.result.data.entries.find((e: Json) => e.runId === run)?.report.summary).toContain("***1111");
      expect(JSON.stringify(audit.json)).not.toContain(CARD);
    }
  });

  it("every procedure of the router is either masked here or returns no argument data (a new one must be added)", () => {
    const masked = new Set([
      "intents.get",
      "intents.list",
      "intents.byIdentity",
      "runs.get",
      "stale.list",
      "queue.list",
      "queue.resolve",
      "calls.get",
      "audit.list",
      "probe.rerun",
      "runs.operatorAbort",
      "confirmations.preview",
    ]);
    // The calling agent's own answers (unmasked, as before) and procedures that carry no arguments.
    const unmasked = new Set([
      "calls.execute",
      "runs.abort",
      "runs.plan",
      "runs.list",
      "confirmations.issue",
      "auth.whoami",
      "sessions.create",
      "sessions.end",
      "tools.list",
      "prompt.rule",
      "stats.overview",
      "stats.attention",
      "stats.oldest",
      "keys.create",
      "keys.list",
      "keys.revoke",
      "tenants.list",
      // Channels and their delivery log (admin keys only): no tool arguments.
      "notifications.channels.list",
      "notifications.channels.create",
      "notifications.channels.update",
      "notifications.channels.delete",
      "notifications.channels.test",
      "notifications.deliveries.list",
    ]);
    const all = Object.keys(appRouter._def.procedures as Record<string, unknown>).sort();
    expect(all).toEqual([...masked, ...unmasked].sort());
  });
});
