import { MAX_OPERATOR_NOTE_CHARS, OPERATOR_ACTION_ID_RULE } from "@tristate/core";
import { z } from "zod";
import { AppError } from "../../app-error.ts";
import { operatorProcedure } from "../../trpc/init.ts";
import { keySchema, operatorActionSchema } from "../operator-support.ts";
import { intentRecordSchema, recordOut } from "../read-schemas.ts";
import { maskerFor, maskRecord } from "../secrets.ts";
import { tenantForKey } from "../tenancy.ts";

/** Input of `queue.resolve`: one operator action on a record waiting for a human. */
export const resolveInput = z
  .object({
    key: keySchema,
    action: operatorActionSchema,
    /** Why (kept in the audit and the timeline). */
    note: z
      .string()
      .trim()
      .min(1, "must not be empty")
      .max(MAX_OPERATOR_NOTE_CHARS, `must be at most ${MAX_OPERATOR_NOTE_CHARS} characters`),
    /** The record version the operator looked at. */
    expectedVersion: z.number().int().positive(),
    /** Client-chosen id: a repeat is answered from the audit, not re-done. */
    operatorActionId: z
      .string()
      .regex(OPERATOR_ACTION_ID_RULE, "must be a UUID or 8–100 URL-safe characters (A–Z a–z 0–9 _ -)"),
  })
  .strict();

/** Output of `queue.resolve`. */
export const resolveOutput = z.object({
  /** The record after the action (for a resend: after its outcome). */
  record: intentRecordSchema,
  /** What an agent now reads for this record. */
  envelope: z.record(z.string(), z.unknown()),
  /** True when answered from a repeated operatorActionId (nothing was done now). */
  replayed: z.boolean(),
  /** The record is older than the tool's key retention (a resend may not be deduplicated). */
  keyExpired: z.boolean(),
  warnings: z.array(z.string()),
  audit: z.object({
    id: z.number().int(),
    operatorActionId: z.string(),
    actor: z.string(),
    action: operatorActionSchema,
    /** Epoch ms. */
    at: z.number(),
    note: z.string(),
  }),
});

/**
 * `queue.resolve({ key, action, note, expectedVersion, operatorActionId })` (operator, admin).
 * Errors: unknown key → NOT_FOUND; not waiting for a human → CONFLICT naming the state; stale
 * version → CONFLICT with `detail.winner { by, actor, action, at, note }`; compensate, resend of a
 * read-only tool, a reused operatorActionId → CONFLICT; invalid input → BAD_REQUEST naming the field.
 * Secret argument values are masked in the answer for every role but admin.
 */
export const queueResolveProcedure = operatorProcedure
  .input(resolveInput)
  .output(resolveOutput)
  .mutation(async ({ ctx, input }) => {
    const { services } = ctx;
    const tenant = await tenantForKey(ctx, input.key);
    if (tenant === null) throw new AppError("NOT_FOUND", `no intent record with key ${input.key}`, { field: "key" });
    const res = await services.tenants
      .executor(tenant)
      .resolve(
        { ...input, actor: { keyId: ctx.auth.id, name: ctx.auth.name } },
        services.tenants.operatorStore(tenant),
      );
    services.logger.info(
      {
        idempotency_key: input.key,
        action: input.action,
        operator: ctx.auth.name,
        operator_action_id: input.operatorActionId,
        replayed: res.replayed,
        status: res.record.status,
      },
      "queue.resolve",
    );
    const masker = maskerFor(ctx, res.record.tool, res.record.args);
    return {
      record: maskRecord(masker, recordOut(res.record)),
      envelope: masker.value({ ...res.envelope }),
      replayed: res.replayed,
      keyExpired: res.keyExpired,
      warnings: res.warnings,
      audit: {
        id: res.audit.id,
        operatorActionId: res.audit.operatorActionId,
        actor: res.audit.actorName,
        action: res.audit.action,
        at: res.audit.atEpochMs,
        note: masker.text(res.audit.note),
      },
    };
  });
