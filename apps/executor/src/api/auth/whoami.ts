import { anyKeyProcedure } from "../../trpc/init.ts";

/** `auth.whoami` → the calling key's id, name, role and tenant (the dashboard's login checks a key with it). */
export const authWhoamiProcedure = anyKeyProcedure.query(({ ctx }) => ({
  id: ctx.auth.id,
  name: ctx.auth.name,
  role: ctx.auth.role,
  tenant: ctx.auth.tenant,
}));
