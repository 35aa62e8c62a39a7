/**
 * Inputs of the `notifications.*` procedures (issue 23 §3). Strict objects: an unknown key is refused
 * naming it and the keys allowed (unknown-keys.ts); every other refusal names the field and its rule.
 */
import { CHANNEL_FIELDS, checkChannelTarget } from "@tristate/db";
import { z } from "zod";
import { tenantInput } from "../tenancy.ts";

/** A channel id as the database makes them (`nch_…`). */
const channelId = z.string().regex(/^nch_[A-Za-z0-9_-]{1,100}$/, "must be a channel id (nch_…)");

/** Input of `notifications.channels.list`. */
export const channelsListInput = z.object({ tenant: tenantInput }).strict().optional();

/**
 * Input of `notifications.channels.create`: the database side's field rules (`CHANNEL_FIELDS`,
 * `checkChannelTarget`: a `webhook` or `slack` channel takes `url`, an `email` channel `to`), strict,
 * with the admin's `tenant`.
 */
export const channelsCreateInput = z
  .object({
    tenant: tenantInput,
    kind: CHANNEL_FIELDS.kind,
    name: CHANNEL_FIELDS.name,
    /** webhook and slack: where to POST. */
    url: CHANNEL_FIELDS.url.optional(),
    /** email: the recipients. */
    to: CHANNEL_FIELDS.to.optional(),
    /** @default every event kind */
    events: CHANNEL_FIELDS.events.optional(),
  })
  .strict()
  .superRefine(checkChannelTarget);

/** Input of `notifications.channels.update`: at least one of `name`, `events`, `enabled`. */
export const channelsUpdateInput = z
  .object({
    tenant: tenantInput,
    id: channelId,
    name: CHANNEL_FIELDS.name.optional(),
    events: CHANNEL_FIELDS.events.optional(),
    enabled: z.boolean().optional(),
  })
  .strict()
  .refine((v) => v.name !== undefined || v.events !== undefined || v.enabled !== undefined, {
    message: "must change at least one of name, events, enabled",
    path: ["id"],
  });

/** Input of `notifications.channels.delete` and `notifications.channels.test`. */
export const channelIdInput = z.object({ tenant: tenantInput, id: channelId }).strict();

/** Input of `notifications.deliveries.list` (newest first). */
export const deliveriesListInput = z
  .object({
    tenant: tenantInput,
    channelId: channelId.optional(),
    status: z.enum(["pending", "delivered", "failed"]).optional(),
    /** `nextCursor` of the previous page. */
    cursor: z.string().min(1).max(200).optional(),
    /** 1–200. @default 50 */
    limit: z.number().int().min(1).max(200).optional(),
  })
  .strict()
  .optional();
