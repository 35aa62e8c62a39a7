import { TENANT_PATTERN, TENANT_RULE_TEXT } from "@tristate/core";
import { API_KEY_ROLES } from "@tristate/db";
import { z } from "zod";
import { AppError } from "../../app-error.ts";
import { adminProcedure } from "../../trpc/init.ts";

/**
 * `keys.create({ name, role, tenant? })` (admin) → the new key's info and its secret, shown this once.
 * A key made without a tenant belongs to `default`.
 */
export const keysCreateProcedure = adminProcedure
  .input(
    z
      .object({
        name: z.string().trim().min(1, "must not be empty").max(100),
        role: z.enum(API_KEY_ROLES),
        /** The tenant whose records the key reads and acts on. @default "default" */
        tenant: z.string().regex(TENANT_PATTERN, TENANT_RULE_TEXT).optional(),
      })
      .strict(),
  )
  .mutation(async ({ ctx, input }) => {
    const created = await ctx.services.keys.create({ name: input.name, role: input.role, tenant: input.tenant });
    ctx.services.logger.info(
      { key_id: created.info.id, role: input.role, tenant: created.info.tenant, by: ctx.auth.name },
      "API key created",
    );
    return created;
  });

/** `keys.list` (admin) → every key with its role and tenant (never a secret), newest first. */
export const keysListProcedure = adminProcedure.query(({ ctx }) => ctx.services.keys.list());

/** `tenants.list` (admin) → every tenant that has keys, `default` included, sorted (the dashboard's tenant filter). */
export const tenantsListProcedure = adminProcedure.query(async ({ ctx }) => ({
  tenants: await ctx.services.tenants.list(),
}));

/** `keys.revoke({ id })` (admin) → revokes a key at once and ends its dashboard sessions. @throws AppError NOT_FOUND for an unknown or already revoked key. */
export const keysRevokeProcedure = adminProcedure
  .input(z.object({ id: z.string().uuid("must be a key id (UUID)") }).strict())
  .mutation(async ({ ctx, input }) => {
    if (input.id === ctx.auth.id)
      throw new AppError("BAD_INPUT", "an admin cannot revoke the key it is using", { field: "id" });
    // Its dashboard sessions end with it, in the same transaction.
    const { revoked, sessionsEnded } = await ctx.services.keys.revoke(input.id);
    if (!revoked) throw new AppError("NOT_FOUND", `no valid key with id ${input.id}`, { field: "id" });
    ctx.services.logger.info({ key_id: input.id, by: ctx.auth.name, sessions_ended: sessionsEnded }, "API key revoked");
    return { id: input.id, revoked: true, sessionsEnded };
  });
