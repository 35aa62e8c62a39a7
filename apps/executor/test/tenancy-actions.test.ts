/**
 * Ownership (issue 10): the authorization matrix for every mutation of the router (see
 * `tenancy-support.ts`). Actions never touch another tenant's records, plans or audit rows; a
 * non-admin's call lands in its own tenant; admins act in the tenant they name.
 */
import { randomUUID } from "node:crypto";
import { idempotencyKey } from "@tristate/core";
import { ApiKeyStore } from "@tristate/db";
import { expect } from "vitest";
import {
  ADMIN,
  AGENTS,
  ANY,
  acting,
  args,
  type Case,
  describeMatrix,
  type Json,
  matrix,
  OPS,
  PROBED,
  VIEW,
} from "./tenancy-support.ts";

const CASES: Record<string, Case> = {
  "sessions.create": {
    roles: VIEW,
    input: () => undefined,
    check: (res, call) => expect(res.json.result.data.tenant).toBe(call.tenant),
  },
  "sessions.end": {
    roles: ["none", ...ANY],
    input: () => ({ sessionId: "tss_not-a-session" }),
    check: (res) => expect(res.json.result.data.ended).toBe(false),
  },
  "calls.execute": {
    roles: AGENTS,
    // The other tenant's exact call: a new record of the caller's tenant, under a key of its own.
    input: (call) => ({ runId: "run-default-only", stepId: "d1", tool: PROBED, args: args("D-1"), ...acting(call) }),
    async check(res, call) {
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const env = res.json.result.data;
      expect(env.status).toBe("SUCCEEDED");
      const theirs = idempotencyKey("run-default-only", "d1", PROBED, { order_id: "D-1", amount: "10.00" }, "default");
      const tenant = call.role === "admin" ? call.fx.tenant : call.tenant;
      expect(env.idempotency_key === theirs).toBe(tenant === "default");
      expect(env.idempotency_key).toBe(
        idempotencyKey("run-default-only", "d1", PROBED, { order_id: "D-1", amount: "10.00" }, tenant),
      );
    },
  },
  "runs.abort": {
    roles: AGENTS,
    input: (call) => ({ runId: `run-${call.fx.tenant}-stale`, budgetMs: 8000, ...acting(call) }),
    async check(res, call) {
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const steps = res.json.result.data.steps as Json[];
      const reaches = call.role === "admin" || call.target === "own";
      // Another tenant's run is, to this key, a run without records: nothing to undo, nothing touched.
      if (!reaches) expect(steps).toStrictEqual([]);
      else expect(steps.length).toBeGreaterThan(0);
      const theirs = await matrix.stack.service.services.tenants.store(call.fx.tenant).get(call.fx.stale);
      expect(theirs).not.toBeNull();
    },
  },
  "runs.operatorAbort": {
    roles: OPS,
    input: (call) => ({ runId: `run-${call.fx.tenant}-stale`, note: "abort from the dashboard", ...acting(call) }),
    async check(res, call) {
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const steps = res.json.result.data.steps as Json[];
      const reaches = call.role === "admin" || call.target === "own";
      // Another tenant's run is, to this key, a run without records: nothing to undo, nothing touched.
      if (!reaches) expect(steps).toStrictEqual([]);
      else expect(steps.length).toBeGreaterThan(0);
      const theirs = await matrix.stack.service.services.tenants.store(call.fx.tenant).get(call.fx.stale);
      expect(theirs).not.toBeNull();
      // Its audit entry is written in the tenant it acted in, never in one it cannot reach.
      const sql = "SELECT tenant FROM audit_entries WHERE action = 'abort_run' AND operator_action_id = $1";
      const { rows } = await matrix.stack.service.services.store.pool.query(sql, [
        res.json.result.data.audit.operatorActionId,
      ]);
      expect(rows.map((r) => r.tenant)).toStrictEqual([reaches ? call.fx.tenant : call.tenant]);
    },
  },
  "runs.plan": {
    roles: AGENTS,
    input: (call) => ({ runId: "run-planned", steps: [{ stepId: "s1", tool: PROBED }], ...acting(call) }),
    async check(res, call) {
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const tenant = call.role === "admin" ? call.fx.tenant : call.tenant;
      expect(await matrix.stack.service.services.tenants.store(tenant).getPlan("run-planned")).not.toBeNull();
      // The other tenant's plan of the same run id is never written by a non-admin.
      if (call.role !== "admin" && call.target === "foreign") {
        expect(await matrix.stack.service.services.tenants.store("default").getPlan("run-planned")).toBeNull();
      }
    },
  },
  "confirmations.issue": {
    roles: OPS,
    input: (call) => ({ runId: "run-shared", stepId: "s1", tool: PROBED, args: args("A-1"), ...acting(call) }),
    check(res, call) {
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const tenant = call.role === "admin" ? call.fx.tenant : call.tenant;
      expect(res.json.result.data.idempotencyKey).toBe(matrix.fx[tenant as "default" | "acme"].shared);
      expect(res.json.result.data.confirms).toMatchObject({ tenant, runId: "run-shared", stepId: "s1", tool: PROBED });
    },
  },
  "queue.resolve": {
    roles: OPS,
    async input(call) {
      const record = await matrix.stack.service.services.tenants.store(call.fx.tenant).get(call.fx.queued);
      return {
        key: call.fx.queued,
        action: "confirm_no_effect",
        note: "checked",
        expectedVersion: record!.version,
        operatorActionId: randomUUID(),
      };
    },
    async check(res, call) {
      const record = await matrix.stack.service.services.tenants.store(call.fx.tenant).get(call.fx.queued);
      if (call.target === "foreign" && call.role !== "admin") {
        expect(res.status, JSON.stringify(res.json)).toBe(404);
        expect(record).toMatchObject({ status: "UNKNOWN", needsHuman: true });
        return;
      }
      // The first allowed caller resolves it; a later one finds it no longer waiting (409).
      expect([200, 409], JSON.stringify(res.json)).toContain(res.status);
      expect(record?.needsHuman).toBe(false);
    },
  },
  "probe.rerun": {
    roles: OPS,
    input: (call) => ({ key: call.fx.shared }),
    check(res, call) {
      if (call.target === "foreign" && call.role !== "admin") {
        expect(res.status, JSON.stringify(res.json)).toBe(404);
        return;
      }
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect(res.json.result.data.probes.some((p: Json) => p.answer === "found")).toBe(true);
    },
  },
  "keys.create": {
    roles: ADMIN,
    input: (call) => ({ name: "made in the matrix", role: "viewer", tenant: call.fx.tenant }),
    check: (res, call) => expect(res.json.result.data.info.tenant).toBe(call.fx.tenant),
  },
  "keys.revoke": {
    roles: ADMIN,
    async input() {
      const store = new ApiKeyStore(matrix.stack.service.services.store.prisma);
      return { id: (await store.create({ name: "to revoke", role: "viewer", tenant: "acme" })).info.id };
    },
    check: (res) => expect(res.json.result.data.revoked).toBe(true),
  },
  "notifications.channels.create": {
    roles: ADMIN,
    input: (call) => ({
      tenant: call.fx.tenant,
      kind: "webhook",
      name: "matrix hook",
      url: "https://hooks.example.test/matrix",
    }),
    check: (res, call) => expect(res.json.result.data.channel.tenant).toBe(call.fx.tenant),
  },
  "notifications.channels.update": {
    roles: ADMIN,
    input: async (call) => ({ tenant: call.fx.tenant, id: await channelOf(call.fx.tenant), enabled: false }),
    check: (res, call) =>
      expect(res.json.result.data.channel).toMatchObject({ tenant: call.fx.tenant, enabled: false }),
  },
  "notifications.channels.delete": {
    roles: ADMIN,
    input: async (call) => ({ tenant: call.fx.tenant, id: await channelOf(call.fx.tenant) }),
    check: (res) => expect(res.json.result.data).toStrictEqual({ deleted: true }),
  },
  "notifications.channels.test": {
    roles: ADMIN,
    input: async (call) => ({ tenant: call.fx.tenant, id: await channelOf(call.fx.tenant) }),
    check: (res) => expect(res.json.result.data.deliveryId).toMatch(/^ndl_/),
  },
};

/** A new notification channel of `tenant`, made through the database (not the procedure under test). */
async function channelOf(tenant: string): Promise<string> {
  const notifications = matrix.stack.service.services.db.notifications(tenant);
  return (await notifications.createChannel({ kind: "slack", name: "matrix", url: "https://hooks.example.test/x" }))
    .channel.id;
}

describeMatrix("authorization matrix: every mutation × role × own/foreign tenant (issue 10)", "mutation", CASES);
