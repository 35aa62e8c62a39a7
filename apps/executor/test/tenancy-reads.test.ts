/**
 * Ownership (issue 10): the authorization matrix for every query of the router (see
 * `tenancy-support.ts`). Another tenant's record answers 404 like a record that does not exist; lists
 * never hold another tenant's rows and may not name another tenant; admins reach every tenant.
 */
import { expect } from "vitest";
import {
  ADMIN,
  ANY,
  acting,
  args,
  type Call,
  type Case,
  describeMatrix,
  type Json,
  matrix,
  OPS,
  PROBED,
  VIEW,
} from "./tenancy-support.ts";

/** The caller sees only its own tenant: 404 for another tenant's record, unless it is an admin. */
const ownOr404 = (
  res: { status: number; json: Json },
  call: Call,
  tenantOf: (data: Json) => string,
  notFound = `no intent record with key ${call.fx.shared}`,
) => {
  if (call.target === "foreign" && call.role !== "admin") {
    // Word for word the answer for a key nobody holds: no existence oracle.
    expect(res.status, JSON.stringify(res.json)).toBe(404);
    expect(res.json.error.message).toBe(notFound);
    return;
  }
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  expect(tenantOf(res.json.result.data)).toBe(call.fx.tenant);
};

/** A list: non-admins get only their tenant's rows and may not name another; admins filter by any tenant. */
const listInput = (call: Call, extra: Record<string, unknown> = {}) =>
  call.target === "own" && call.role !== "admin" ? extra : { ...extra, tenant: call.fx.tenant };
const tenantList = (rows: (data: Json) => Json[]) => (res: { status: number; json: Json }, call: Call) => {
  if (call.target === "foreign" && call.role !== "admin") {
    expect(res.status, JSON.stringify(res.json)).toBe(403);
    expect(res.json.error.data.field).toBe("tenant");
    return;
  }
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  const items = rows(res.json.result.data);
  expect(items.length).toBeGreaterThan(0);
  for (const item of items) expect(item.tenant ?? item.before?.tenant).toBe(call.fx.tenant);
};
const CASES: Record<string, Case> = {
  "auth.whoami": {
    roles: ANY,
    input: () => undefined,
    check: (res, call) => expect(res.json.result.data.tenant).toBe(call.tenant),
  },
  "tools.list": { roles: ANY, input: () => undefined, check: (res) => expect(res.status).toBe(200) },
  "prompt.rule": { roles: ANY, input: () => undefined, check: (res) => expect(res.status).toBe(200) },
  "calls.get": {
    roles: ANY,
    input: (call) => ({ key: call.fx.shared }),
    check: (res, call) => ownOr404(res, call, (d) => d.tenant),
  },
  "intents.get": {
    roles: VIEW,
    input: (call) => ({ key: call.fx.shared }),
    check: (res, call) => ownOr404(res, call, (d) => d.record.tenant),
  },
  "runs.get": {
    roles: VIEW,
    input: (call) => ({ runId: `run-${call.fx.tenant}-queue` }),
    check: (res, call) =>
      ownOr404(
        res,
        call,
        (d) => {
          const tenants = [...new Set(d.records.map((r: Json) => r.tenant))];
          expect(tenants).toHaveLength(1);
          return tenants[0] as string;
        },
        `no intent records and no plan for run run-${call.fx.tenant}-queue`,
      ),
  },
  "runs.list": { roles: VIEW, input: (call) => listInput(call), check: tenantList((d) => d.items) },
  "confirmations.preview": {
    roles: OPS,
    input: (call) => ({ runId: "run-shared", stepId: "s1", tool: PROBED, args: args("A-1"), ...acting(call) }),
    check(res, call) {
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const tenant = call.role === "admin" ? call.fx.tenant : call.tenant;
      expect(res.json.result.data.idempotencyKey).toBe(matrix.fx[tenant as "default" | "acme"].shared);
      expect(res.json.result.data.confirms).toMatchObject({ tenant, runId: "run-shared", stepId: "s1", tool: PROBED });
    },
  },
  "queue.list": {
    roles: VIEW,
    input: (call) => listInput(call),
    check: tenantList((d) => d.items),
  },
  "audit.list": {
    roles: VIEW,
    input: (call) => listInput(call),
    check: tenantList((d) => d.entries),
  },
  "intents.list": {
    roles: VIEW,
    input: (call) => listInput(call),
    check: tenantList((d) => d.items),
  },
  "intents.byIdentity": {
    roles: VIEW,
    // `A-1` is the shared call's order id in both tenants.
    input: (call) => listInput(call, { value: "a-1" }),
    check: tenantList((d) => d.items),
  },
  "stale.list": {
    roles: VIEW,
    input: (call) => listInput(call),
    check: tenantList((d) => d.items),
  },
  "stats.overview": {
    roles: VIEW,
    input: (call) => listInput(call, { fromEpochMs: Date.now() - 3600_000, toEpochMs: Date.now() + 3600_000 }),
    async check(res, call) {
      if (call.target === "foreign" && call.role !== "admin") {
        expect(res.status).toBe(403);
        return;
      }
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const { rows } = await matrix.stack.service.services.store.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM intent_records WHERE tenant = $1",
        [call.fx.tenant],
      );
      expect(res.json.result.data.totals.calls).toBe(rows[0]!.n);
    },
  },
  "stats.oldest": {
    roles: VIEW,
    input: (call) => listInput(call),
    async check(res, call) {
      if (call.target === "foreign" && call.role !== "admin") {
        expect(res.status).toBe(403);
        return;
      }
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const { rows } = await matrix.stack.service.services.store.pool.query<{ oldest: Date }>(
        "SELECT min(created_at) AS oldest FROM intent_records WHERE tenant = $1",
        [call.fx.tenant],
      );
      expect(res.json.result.data.oldestCreatedAtEpochMs).toBe(rows[0]!.oldest.getTime());
    },
  },
  "stats.attention": {
    roles: VIEW,
    input: (call) => listInput(call),
    async check(res, call) {
      if (call.target === "foreign" && call.role !== "admin") {
        expect(res.status).toBe(403);
        return;
      }
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const { rows } = await matrix.stack.service.services.store.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM intent_records WHERE tenant = $1 AND needs_human",
        [call.fx.tenant],
      );
      expect(rows[0]!.n).toBeGreaterThan(0);
      expect(res.json.result.data.needsHuman.count).toBe(rows[0]!.n);
    },
  },
  "keys.list": {
    roles: ADMIN,
    input: () => undefined,
    check: (res) =>
      expect(new Set(res.json.result.data.map((k: Json) => k.tenant))).toStrictEqual(new Set(["default", "acme"])),
  },
  "tenants.list": {
    roles: ADMIN,
    input: () => undefined,
    check: (res) => expect(res.json.result.data.tenants).toStrictEqual(["acme", "default"]),
  },
  "notifications.channels.list": {
    roles: ADMIN,
    input: async (call) => {
      await matrix.stack.service.services.db
        .notifications(call.fx.tenant)
        .createChannel({ kind: "slack", name: "matrix", url: "https://hooks.example.test/x" });
      return { tenant: call.fx.tenant };
    },
    check: (res, call) => {
      const { channels } = res.json.result.data;
      expect(channels.length).toBeGreaterThan(0);
      for (const c of channels) expect(c.tenant).toBe(call.fx.tenant);
    },
  },
  "notifications.deliveries.list": {
    roles: ADMIN,
    input: async (call) => {
      const notifications = matrix.stack.service.services.db.notifications(call.fx.tenant);
      const { channel } = await notifications.createChannel({
        kind: "slack",
        name: "m",
        url: "https://hooks.example.test/x",
      });
      await notifications.sendTest(channel.id);
      return { tenant: call.fx.tenant };
    },
    check: (res, call) => {
      const { items } = res.json.result.data;
      expect(items.length).toBeGreaterThan(0);
      for (const d of items) expect(d.tenant).toBe(call.fx.tenant);
    },
  },
};

describeMatrix("authorization matrix: every query × role × own/foreign tenant (issue 10)", "query", CASES);
