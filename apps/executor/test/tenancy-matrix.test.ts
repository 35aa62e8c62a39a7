/**
 * Ownership (issue 10): the authorization matrix, generated from the router. Every procedure ×
 * caller (no key, and the agent, viewer and operator keys of tenant `acme`, and an admin) × target
 * (a record, run or list of the caller's own tenant, or of another tenant's) is called over HTTP on
 * the real PostgreSQL. A procedure missing from the table below fails the test, so a new one cannot
 * ship unchecked. Another tenant's record answers 404 like a record that does not exist; lists never
 * hold another tenant's rows; actions never touch them; admins reach every tenant.
 */
import { randomUUID } from "node:crypto";
import { idempotencyKey } from "@tristate/core";
import { ApiKeyStore } from "@tristate/db";
import { refundTool } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appRouter } from "../src/trpc/router.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

type Role = "none" | "agent" | "viewer" | "operator" | "admin";
type Target = "own" | "foreign";
/** The records each tenant holds (see `fixtures`). */
interface Fixture {
  tenant: string;
  /** `run-shared` / `s1`, the same call in both tenants. */
  shared: string;
  /** Waiting in the human queue. */
  queued: string;
  /** Resolved by an operator of the tenant (its audit row). */
  audited: string;
  /** PENDING past its deadline. */
  stale: string;
}
interface Call {
  role: Role;
  key: string | null;
  /** The caller's own tenant (admins belong to `default` but act on every tenant). */
  tenant: string;
  target: Target;
  /** The targeted tenant's fixture. */
  fx: Fixture;
}
interface Case {
  roles: readonly Role[];
  input(call: Call): unknown | Promise<unknown>;
  /** Checks an allowed caller's answer. */
  check(res: { status: number; json: Json }, call: Call): void | Promise<void>;
}

const REFUND = "issue_refund";
const PROBED = "issue_refund_probed";
const args = (order: string) => ({ order_id: order, amount: "10.00", currency: "EUR" });
const ANY: readonly Role[] = ["agent", "viewer", "operator", "admin"];
const VIEW: readonly Role[] = ["viewer", "operator", "admin"];
const OPS: readonly Role[] = ["operator", "admin"];
const AGENTS: readonly Role[] = ["agent", "admin"];
const ADMIN: readonly Role[] = ["admin"];

let stack: TestStack;
const fx = {} as Record<"default" | "acme", Fixture>;
const keys = {} as Record<Role, string | null>;

/** Calls of one tenant's agent (`stack.post`) for the fixtures. */
async function execute(key: string, runId: string, stepId: string, tool: string, order: string) {
  const res = await stack.post("calls.execute", { runId, stepId, tool, args: args(order), budgetMs: 8000 }, key);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.result.data as Json;
}

async function fixtures(tenant: "default" | "acme", agent: string, operator: string): Promise<Fixture> {
  const shared = (await execute(agent, "run-shared", "s1", PROBED, "A-1")).idempotency_key;
  stack.remote.fault({ answer: 504, commit: false });
  const queued = await execute(agent, `run-${tenant}-queue`, "q1", REFUND, `Q-${tenant}`);
  expect(queued).toMatchObject({ status: "UNKNOWN", resolution: "needs_human" });
  stack.remote.fault({ answer: 504, commit: false });
  const audited = (await execute(agent, `run-${tenant}-queue`, "q2", REFUND, `R-${tenant}`)).idempotency_key;
  const record = await stack.service.services.tenants.store(tenant).get(audited);
  const resolved = await stack.post(
    "queue.resolve",
    {
      key: audited,
      action: "confirm_no_effect",
      note: `${tenant}: nothing at the PSP`,
      expectedVersion: record!.version,
      operatorActionId: randomUUID(),
    },
    operator,
  );
  expect(resolved.status, JSON.stringify(resolved.json)).toBe(200);
  const stale = (await execute(agent, `run-${tenant}-stale`, "p1", PROBED, `S-${tenant}`)).idempotency_key;
  // Its outcome is written in the background: let it land before the row is rewritten by hand.
  await stack.service.services.tenants.outcomesWritten();
  await stack.service.services.store.pool.query(
    "UPDATE intent_records SET status = 'PENDING', lease_until_at = now() - interval '1 minute', recheck_at = now() - interval '1 minute' WHERE tenant = $1 AND key = $2",
    [tenant, stale],
  );
  return { tenant, shared, queued: queued.idempotency_key, audited, stale };
}

beforeAll(async () => {
  stack = await startStack({
    tools: (remote) => [
      refundTool(remote, { kind: "unsafe", probe: undefined, probeByIdentity: undefined }),
      refundTool(remote, { name: PROBED }),
    ],
    env: { TRISTATE_PROBE_SPACING_MS: "0", TRISTATE_PROBE_ATTEMPTS: "1", TRISTATE_AUTH_FAILURES: "1000" },
  });
  const store = new ApiKeyStore(stack.service.services.store.prisma);
  const acme = {} as Record<"agent" | "viewer" | "operator", string>;
  for (const role of ["agent", "viewer", "operator"] as const) {
    acme[role] = (await store.create({ name: `acme ${role}`, role, tenant: "acme" })).secret;
  }
  Object.assign(keys, { none: null, ...acme, admin: stack.keys.admin });
  fx.default = await fixtures("default", stack.keys.agent, stack.keys.operator);
  fx.acme = await fixtures("acme", acme.agent, acme.operator);
  // Only the default tenant has this run.
  await execute(stack.keys.agent, "run-default-only", "d1", PROBED, "D-1");
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

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
/** The tenant an acting procedure is pointed at: admins name it; others act in their own. */
const acting = (call: Call) => (call.role === "admin" ? { tenant: call.fx.tenant } : {});

const CASES: Record<string, Case> = {
  "auth.whoami": {
    roles: ANY,
    input: () => undefined,
    check: (res, call) => expect(res.json.result.data.tenant).toBe(call.tenant),
  },
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
  "tools.list": { roles: ANY, input: () => undefined, check: (res) => expect(res.status).toBe(200) },
  "prompt.rule": { roles: ANY, input: () => undefined, check: (res) => expect(res.status).toBe(200) },
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
      const theirs = await stack.service.services.tenants.store(call.fx.tenant).get(call.fx.stale);
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
      const theirs = await stack.service.services.tenants.store(call.fx.tenant).get(call.fx.stale);
      expect(theirs).not.toBeNull();
      // Its audit entry is written in the tenant it acted in, never in one it cannot reach.
      const sql = "SELECT tenant FROM audit_entries WHERE action = 'abort_run' AND operator_action_id = $1";
      const { rows } = await stack.service.services.store.pool.query(sql, [
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
      expect(await stack.service.services.tenants.store(tenant).getPlan("run-planned")).not.toBeNull();
      // The other tenant's plan of the same run id is never written by a non-admin.
      if (call.role !== "admin" && call.target === "foreign") {
        expect(await stack.service.services.tenants.store("default").getPlan("run-planned")).toBeNull();
      }
    },
  },
  "confirmations.issue": {
    roles: OPS,
    input: (call) => ({ runId: "run-shared", stepId: "s1", tool: PROBED, args: args("A-1"), ...acting(call) }),
    check(res, call) {
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const tenant = call.role === "admin" ? call.fx.tenant : call.tenant;
      expect(res.json.result.data.idempotencyKey).toBe(fx[tenant as "default" | "acme"].shared);
      expect(res.json.result.data.confirms).toMatchObject({ tenant, runId: "run-shared", stepId: "s1", tool: PROBED });
    },
  },
  "confirmations.preview": {
    roles: OPS,
    input: (call) => ({ runId: "run-shared", stepId: "s1", tool: PROBED, args: args("A-1"), ...acting(call) }),
    check(res, call) {
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const tenant = call.role === "admin" ? call.fx.tenant : call.tenant;
      expect(res.json.result.data.idempotencyKey).toBe(fx[tenant as "default" | "acme"].shared);
      expect(res.json.result.data.confirms).toMatchObject({ tenant, runId: "run-shared", stepId: "s1", tool: PROBED });
    },
  },
  "queue.list": {
    roles: VIEW,
    input: (call) => listInput(call),
    check: tenantList((d) => d.items),
  },
  "queue.resolve": {
    roles: OPS,
    async input(call) {
      const record = await stack.service.services.tenants.store(call.fx.tenant).get(call.fx.queued);
      return {
        key: call.fx.queued,
        action: "confirm_no_effect",
        note: "checked",
        expectedVersion: record!.version,
        operatorActionId: randomUUID(),
      };
    },
    async check(res, call) {
      const record = await stack.service.services.tenants.store(call.fx.tenant).get(call.fx.queued);
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
      const { rows } = await stack.service.services.store.pool.query<{ n: number }>(
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
      const { rows } = await stack.service.services.store.pool.query<{ oldest: Date }>(
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
      const { rows } = await stack.service.services.store.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM intent_records WHERE tenant = $1 AND needs_human",
        [call.fx.tenant],
      );
      expect(rows[0]!.n).toBeGreaterThan(0);
      expect(res.json.result.data.needsHuman.count).toBe(rows[0]!.n);
    },
  },
  "keys.create": {
    roles: ADMIN,
    input: (call) => ({ name: "made in the matrix", role: "viewer", tenant: call.fx.tenant }),
    check: (res, call) => expect(res.json.result.data.info.tenant).toBe(call.fx.tenant),
  },
  "keys.list": {
    roles: ADMIN,
    input: () => undefined,
    check: (res) =>
      expect(new Set(res.json.result.data.map((k: Json) => k.tenant))).toStrictEqual(new Set(["default", "acme"])),
  },
  "keys.revoke": {
    roles: ADMIN,
    async input() {
      const store = new ApiKeyStore(stack.service.services.store.prisma);
      return { id: (await store.create({ name: "to revoke", role: "viewer", tenant: "acme" })).info.id };
    },
    check: (res) => expect(res.json.result.data.revoked).toBe(true),
  },
  "tenants.list": {
    roles: ADMIN,
    input: () => undefined,
    check: (res) => expect(res.json.result.data.tenants).toStrictEqual(["acme", "default"]),
  },
};

describe("authorization matrix: every procedure × role × own/foreign tenant (issue 10)", () => {
  const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { type: string } }>;

  it("every procedure of the router has a row in the matrix", () => {
    expect(Object.keys(CASES).sort()).toStrictEqual(Object.keys(procedures).sort());
  });

  // Reads first: the actions below resolve the queue and reconcile the stale records.
  const reads = (path: string) => (path.endsWith(".list") || path.startsWith("stats.") ? 0 : 1);
  const ordered = Object.entries(CASES).sort(([a], [b]) => reads(a) - reads(b));
  for (const [path, spec] of ordered) {
    it(`${path}`, async () => {
      const type = procedures[path]?._def.type;
      expect(["query", "mutation"]).toContain(type);
      for (const role of ["none", "agent", "viewer", "operator", "admin"] as const) {
        for (const target of ["own", "foreign"] as const) {
          const tenant = role === "admin" ? "default" : "acme";
          const call: Call = {
            role,
            key: keys[role],
            tenant,
            target,
            fx: target === "own" ? fx[tenant] : fx[tenant === "acme" ? "default" : "acme"],
          };
          const input = await spec.input(call);
          const res =
            type === "query" ? await stack.get(path, input, call.key) : await stack.post(path, input ?? {}, call.key);
          const label = `${path} as ${role} on ${target} (${call.fx.tenant}) → ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`;
          if (!spec.roles.includes(role)) {
            expect(res.status, label).toBe(role === "none" ? 401 : 403);
            continue;
          }
          try {
            await spec.check(res, call);
          } catch (error) {
            throw new Error(`${label}\n${error instanceof Error ? error.message : String(error)}`);
          }
        }
      }
    });
  }
});
