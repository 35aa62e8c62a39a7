import { z } from "zod";
import { AppError } from "../../app-error.ts";
import type { Services } from "../../trpc/context.ts";
import { publicProcedure, viewerProcedure } from "../../trpc/init.ts";

/** The session lifetimes from the settings. */
export function sessionLimits(services: Services) {
  return { ttlMs: services.env.TRISTATE_SESSION_TTL_MS, idleMs: services.env.TRISTATE_SESSION_IDLE_MS };
}

/**
 * `sessions.create` (viewer, operator, admin; called with the key as `Authorization: Bearer`, so a bad
 * key counts against the address like any other) → a new dashboard session: an opaque id the browser
 * keeps instead of the key (`Authorization: Session <id>` then acts as the key), its absolute expiry and
 * idle timeout, and who it is. Only the id's SHA-256 is stored. Agent keys are refused (403).
 */
export const sessionsCreateProcedure = viewerProcedure.mutation(async ({ ctx }) => {
  // A session must not mint the next one: its absolute expiry would then never end anything.
  if (ctx.via !== "key") {
    throw new AppError(
      "FORBIDDEN",
      "sessions.create needs the API key itself (Authorization: Bearer <key>), not a session",
    );
  }
  const limits = sessionLimits(ctx.services);
  const now = ctx.services.now();
  await ctx.services.sessions.purgeExpired(limits, now);
  const { sessionId, expiresAtEpochMs } = await ctx.services.sessions.create(ctx.auth.id, limits, now);
  ctx.services.logger.info({ key_id: ctx.auth.id, role: ctx.auth.role }, "dashboard session opened");
  return {
    sessionId,
    expiresAtEpochMs,
    idleTimeoutMs: limits.idleMs,
    id: ctx.auth.id,
    name: ctx.auth.name,
    role: ctx.auth.role,
    tenant: ctx.auth.tenant,
  };
});

/**
 * `sessions.end({ sessionId })` (no key needed: holding the id is the right to end it) → ends the
 * session (sign-out); the id is refused from then on. `ended: false` when it had already ended.
 */
export const sessionsEndProcedure = publicProcedure
  .input(z.object({ sessionId: z.string().max(200) }).strict())
  .mutation(async ({ ctx, input }) => ({ ended: await ctx.services.sessions.end(input.sessionId) }));
