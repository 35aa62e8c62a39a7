/**
 * Inputs of the `notifications.*` procedures (issue 23 §3). Strict objects: an unknown key is refused
 * naming it and the keys allowed (unknown-keys.ts); every other refusal names the field and its rule.
 */
import { NOTIFICATION_CHANNEL_KINDS, NOTIFICATION_EVENT_KINDS } from "@tristate/db";
import { z } from "zod";
import { tenantInput } from "../tenancy.ts";

/** A channel id as the database makes them (`nch_…`). */
const channelId = z.string().regex(/^nch_[A-Za-z0-9_-]{1,100}$/, "must be a channel id (nch_…)");

/** Event kinds a channel receives: at least one, none twice (`test` is always delivered to its channel). */
const eventKinds = z
  .array(z.enum(NOTIFICATION_EVENT_KINDS.filter((k) => k !== "test") as [string, ...string[]]))
  .min(1, "must list at least one event kind")
  .max(NOTIFICATION_EVENT_KINDS.length)
  .refine((kinds) => new Set(kinds).size === kinds.length, "must not list an event kind twice");

/** A channel's label, 1–100 characters. */
const channelName = z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters");

/** Input of `notifications.channels.list`. */
export const channelsListInput = z.object({ tenant: tenantInput }).strict().optional();

/**
 * Input of `notifications.channels.create`: a `webhook` or `slack` channel takes `url` (http or
 * https), an `email` channel takes `to` (1–20 addresses); the other field is refused.
 */
export const channelsCreateInput = z
  .object({
    tenant: tenantInput,
    kind: z.enum(NOTIFICATION_CHANNEL_KINDS),
    name: channelName,
    /** webhook and slack: where to POST. */
    url: z
      .url({ protocol: /^https?$/, error: "must be an absolute http(s) URL" })
      .max(2000)
      .optional(),
    /** email: the recipients. */
    to: z
      .array(z.email("must be an e-mail address"))
      .min(1, "must list at least one address")
      .max(20, "must list at most 20 addresses")
      .optional(),
    /** @default every event kind */
    events: eventKinds.optional(),
  })
  .strict()
  .superRefine((input, ctx) => {
    if (input.kind === "email") {
      if (input.to === undefined)
        ctx.addIssue({ code: "custom", path: ["to"], message: "is required for an email channel" });
      if (input.url !== undefined)
        ctx.addIssue({ code: "custom", path: ["url"], message: "is not taken by an email channel (it uses to)" });
    } else {
      if (input.url === undefined)
        ctx.addIssue({ code: "custom", path: ["url"], message: `is required for a ${input.kind} channel` });
      if (input.to !== undefined)
        ctx.addIssue({
          code: "custom",
          path: ["to"],
          message: `is not taken by a ${input.kind} channel (it uses url)`,
        });
    }
  });

/** Input of `notifications.channels.update`: at least one of `name`, `events`, `enabled`. */
export const channelsUpdateInput = z
  .object({
    tenant: tenantInput,
    id: channelId,
    name: channelName.optional(),
    events: eventKinds.optional(),
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
