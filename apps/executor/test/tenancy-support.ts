/**
 * Ownership (issue 10): the authorization matrix's shared part, used by `tenancy-reads.test.ts` (every
 * query) and `tenancy-actions.test.ts` (every mutation). Each file starts its own service on the real
 * PostgreSQL with two tenants' fixtures (`default` and `acme`), then calls every procedure of its kind ×
 * caller (no key, and the agent, viewer and operator keys of tenant `acme`, and an admin) × target (a
 * record, run or list of the caller's own tenant, or of another tenant's) over HTTP. A procedure of the
 * router missing from its file's table fails that file, so a new one cannot ship unchecked.
 */
import { randomUUID } from "node:crypto";
import { ApiKeyStore } from "@tristate/db";
import { refundTool } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appRouter } from "../src/trpc/router.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

export type { Json };
export type Role = "none" | "agent" | "viewer" | "operator" | "admin";
type Target = "own" | "foreign";
/** The records each tenant holds (see `fixtures`). */
export interface Fixture {
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
/** One call of the matrix: who calls, at which tenant's fixture. */
export interface Call {
  role: Role;
  key: string | null;
  /** The caller's own tenant (admins belong to `default` but act on every tenant). */
  tenant: string;
  target: Target;
  /** The targeted tenant's fixture. */
  fx: Fixture;
}
/** A procedure's row: the roles it admits, its input, and the check of an admitted caller's answer. */
export interface Case {
  roles: readonly Role[];
  input(call: Call): unknown | Promise<unknown>;
  /** Checks an allowed caller's answer. */
  check(res: { status: number; json: Json }, call: Call): void | Promise<void>;
}

export const REFUND = "issue_refund";
export const PROBED = "issue_refund_probed";
/** A refund's arguments for an order id. */
export const args = (order: string) => ({ order_id: order, amount: "10.00", currency: "EUR" });
export const ANY: readonly Role[] = ["agent", "viewer", "operator", "admin"];
export const VIEW: readonly Role[] = ["viewer", "operator", "admin"];
export const OPS: readonly Role[] = ["operator", "admin"];
export const AGENTS: readonly Role[] = ["agent", "admin"];
export const ADMIN: readonly Role[] = ["admin"];

/** The running stack and each tenant's fixture, set by `describeMatrix`'s `beforeAll`. */
export const matrix = {
  stack: undefined as unknown as TestStack,
  fx: {} as Record<"default" | "acme", Fixture>,
  keys: {} as Record<Role, string | null>,
};

/** Calls of one tenant's agent for the fixtures; the call must answer 200. */
export async function execute(key: string, runId: string, stepId: string, tool: string, order: string) {
  const res = await matrix.stack.post("calls.execute", { runId, stepId, tool, args: args(order), budgetMs: 8000 }, key);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.result.data as Json;
}

async function fixtures(tenant: "default" | "acme", agent: string, operator: string): Promise<Fixture> {
  const { stack } = matrix;
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

async function setUp(): Promise<void> {
  matrix.stack = await startStack({
    tools: (remote) => [
      refundTool(remote, { kind: "unsafe", probe: undefined, probeByIdentity: undefined }),
      refundTool(remote, { name: PROBED }),
    ],
    env: { TRISTATE_PROBE_SPACING_MS: "0", TRISTATE_PROBE_ATTEMPTS: "1", TRISTATE_AUTH_FAILURES: "1000" },
  });
  const store = new ApiKeyStore(matrix.stack.service.services.store.prisma);
  const acme = {} as Record<"agent" | "viewer" | "operator", string>;
  for (const role of ["agent", "viewer", "operator"] as const) {
    acme[role] = (await store.create({ name: `acme ${role}`, role, tenant: "acme" })).secret;
  }
  Object.assign(matrix.keys, { none: null, ...acme, admin: matrix.stack.keys.admin });
  matrix.fx.default = await fixtures("default", matrix.stack.keys.agent, matrix.stack.keys.operator);
  matrix.fx.acme = await fixtures("acme", acme.agent, acme.operator);
  // Only the default tenant has this run.
  await execute(matrix.stack.keys.agent, "run-default-only", "d1", PROBED, "D-1");
}

/**
 * Runs the matrix for every procedure of one kind: checks that `cases` names exactly the router's
 * procedures of that kind, then calls each (in the table's order, or `order`'s) as every role on its own
 * and the other tenant. A role the row does not admit must get 401 (no key) or 403.
 */
export function describeMatrix(
  title: string,
  type: "query" | "mutation",
  cases: Record<string, Case>,
  order: (path: string) => number = () => 0,
): void {
  const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { type: string } }>;
  describe(title, () => {
    beforeAll(setUp, 90_000);
    afterAll(async () => {
      await matrix.stack?.close();
    });

    it(`every ${type} of the router has a row in the matrix`, () => {
      const ofType = Object.keys(procedures).filter((path) => procedures[path]!._def.type === type);
      expect(Object.keys(cases).sort()).toStrictEqual(ofType.sort());
    });

    const ordered = Object.entries(cases).sort(([a], [b]) => order(a) - order(b));
    for (const [path, spec] of ordered) it(path, () => runCase(path, type, spec));
  });
}

async function runCase(path: string, type: "query" | "mutation", spec: Case): Promise<void> {
  const { stack, fx, keys } = matrix;
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
}

/** The tenant an acting procedure is pointed at: admins name it; others act in their own. */
export const acting = (call: Call) => (call.role === "admin" ? { tenant: call.fx.tenant } : {});
