import { TENANT_PATTERN, TENANT_RULE_TEXT } from "@tristate/core";
import type { ApiKeyInfo } from "@tristate/db";
import { z } from "zod";
import { AppError } from "../app-error.ts";
import type { Services } from "../trpc/context.ts";

/**
 * Ownership (issue 10): every key belongs to a tenant; agents, viewers and operators read and act on
 * their tenant's records only, admins on every tenant's. A record of another tenant is answered 404
 * like a record that does not exist (no existence oracle), because every look-up runs inside the
 * caller's tenant. These three helpers are the only places a procedure decides which tenant it uses.
 */

/** The optional `tenant` input of run-, list- and call-scoped procedures (honoured for admin keys). */
export const tenantInput = z.string().regex(TENANT_PATTERN, TENANT_RULE_TEXT).optional();

/** What the helpers need of a request's context. */
interface Caller {
  services: Services;
  auth: ApiKeyInfo;
}

/**
 * The tenant a call acts in: the key's own; an admin key may name another (`tenant` input) that
 * exists — a tenant exists once a key is made in it, and only such tenants are swept and listed, so
 * no record may be written into one that is not.
 * @throws AppError FORBIDDEN (field `tenant`) when a non-admin key names a tenant other than its own;
 *   NOT_FOUND (field `tenant`) when an admin names a tenant that has no keys.
 */
export async function actingTenant(ctx: Caller, requested: string | undefined): Promise<string> {
  const tenant = ownOrNamed(ctx, requested);
  if (tenant !== ctx.auth.tenant && !(await ctx.services.tenants.list()).includes(tenant)) {
    throw new AppError(
      "NOT_FOUND",
      `tenant: no tenant "${tenant}" (a tenant exists once a key is made in it: keys.create { tenant })`,
      { field: "tenant" },
    );
  }
  return tenant;
}

/** The key's own tenant, or (admins only) the one named. @throws AppError FORBIDDEN (field `tenant`). */
function ownOrNamed(ctx: Caller, requested: string | undefined): string {
  if (requested === undefined || requested === ctx.auth.tenant) return ctx.auth.tenant;
  if (ctx.auth.role === "admin") return requested;
  throw new AppError(
    "FORBIDDEN",
    `tenant: this key belongs to tenant "${ctx.auth.tenant}"; only admin keys may name another tenant`,
    { field: "tenant" },
  );
}

/**
 * The tenants a read covers: a non-admin key's own tenant (naming another is refused); an admin's
 * `tenant` filter, or every tenant (undefined) without one.
 * @throws AppError FORBIDDEN (field `tenant`) as {@link actingTenant}.
 */
export function readTenant(ctx: Caller, requested: string | undefined): string | undefined {
  if (ctx.auth.role === "admin") return requested;
  return ownOrNamed(ctx, requested);
}

/**
 * The tenant in which to look up a record by idempotency key: a non-admin key's own (a foreign key
 * is then simply not found: 404); for an admin, the tenant that holds the key.
 * @returns null when an admin asks for a key no tenant holds.
 */
export async function tenantForKey(ctx: Caller, key: string): Promise<string | null> {
  if (ctx.auth.role !== "admin") return ctx.auth.tenant;
  return ctx.services.tenants.tenantOfKey(key);
}
