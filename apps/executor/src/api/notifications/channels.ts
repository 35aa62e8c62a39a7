/**
 * `notifications.channels.*` (admin keys only; issue 23 §3): a tenant's notification channels — a
 * signed webhook, a Slack incoming webhook, e-mail over SMTP. The tenant is the key's own unless an
 * admin names another (`tenant`); another tenant's channel answers 404 like one that does not exist.
 */
import type { NotificationChannel, NotificationEvent, TenantNotifications } from "@tristate/db";
import { AppError } from "../../app-error.ts";
import { notifyHostPolicy, refusedChannelUrl } from "../../notifications/allowed-hosts.ts";
import { channelsChanged } from "../../notifications/channel-cache.ts";
import type { Context } from "../../trpc/context.ts";
import { adminProcedure } from "../../trpc/init.ts";
import { actingTenant } from "../tenancy.ts";
import { channelIdInput, channelsCreateInput, channelsListInput, channelsUpdateInput } from "./schemas.ts";

type Caller = Pick<Context, "services"> & { auth: NonNullable<Context["auth"]> };

/** The acting tenant's channels and log. @throws AppError FORBIDDEN/NOT_FOUND (field `tenant`) as `actingTenant`. */
export async function tenantNotifications(ctx: Caller, tenant: string | undefined): Promise<TenantNotifications> {
  return ctx.services.db.notifications(await actingTenant(ctx, tenant));
}

/** The database's refusal of a channel (a TypeError naming the field first) as BAD_INPUT naming it. */
function refusedChannel(error: unknown): never {
  if (error instanceof TypeError) {
    const field = /^([A-Za-z][A-Za-z0-9_.]*)\b/.exec(error.message)?.[1] ?? "input";
    throw new AppError("BAD_INPUT", error.message, { field });
  }
  throw error;
}

/** 404 naming the field `id`, the same for a channel of another tenant as for none. */
function noChannel(id: string): AppError {
  return new AppError("NOT_FOUND", `id: no notification channel ${id} in this tenant`, { field: "id" });
}

/** `notifications.channels.list({ tenant? })` → `{ channels }`, oldest first (never a secret). */
export const notificationsChannelsListProcedure = adminProcedure
  .input(channelsListInput)
  .query(async ({ ctx, input }): Promise<{ channels: NotificationChannel[] }> => {
    const notifications = await tenantNotifications(ctx, input?.tenant);
    return { channels: await notifications.listChannels() };
  });

/**
 * `notifications.channels.create({ tenant?, kind, name, url?, to?, events? })` → `{ channel, secret }`:
 * a webhook's signing secret (`whsec_…`) is shown this once; null for other kinds.
 * @throws AppError BAD_INPUT naming the field (url for webhook/slack, to for email); `url` also when
 *   its host is not allowed by `TRISTATE_NOTIFY_ALLOW_HOSTS` (notifications/allowed-hosts.ts).
 */
export const notificationsChannelsCreateProcedure = adminProcedure
  .input(channelsCreateInput)
  .mutation(async ({ ctx, input }): Promise<{ channel: NotificationChannel; secret: string | null }> => {
    const notifications = await tenantNotifications(ctx, input.tenant);
    if (input.kind !== "email" && input.url !== undefined && URL.canParse(input.url)) {
      const policy = notifyHostPolicy(ctx.services.env.TRISTATE_NOTIFY_ALLOW_HOSTS);
      const refused = await refusedChannelUrl(policy, input.url);
      if (refused) throw new AppError("BAD_INPUT", refused, { field: "url" });
    }
    const created = await notifications
      .createChannel({
        kind: input.kind,
        name: input.name,
        ...(input.url !== undefined ? { url: input.url } : {}),
        ...(input.to !== undefined ? { to: input.to } : {}),
        ...(input.events !== undefined ? { events: input.events as NotificationChannel["events"] } : {}),
      })
      .catch(refusedChannel);
    await channelsChanged(ctx.services.db, notifications.tenant);
    ctx.services.logger.info(
      { channel_id: created.channel.id, kind: input.kind, tenant: notifications.tenant, by: ctx.auth.name },
      "notification channel created",
    );
    return created;
  });

/** `notifications.channels.update({ tenant?, id, name?, events?, enabled? })` → `{ channel }`. @throws AppError NOT_FOUND (field `id`). */
export const notificationsChannelsUpdateProcedure = adminProcedure
  .input(channelsUpdateInput)
  .mutation(async ({ ctx, input }): Promise<{ channel: NotificationChannel }> => {
    const notifications = await tenantNotifications(ctx, input.tenant);
    const channel = await notifications
      .updateChannel(input.id, {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.events !== undefined ? { events: input.events as NotificationChannel["events"] } : {}),
        ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
      })
      .catch(refusedChannel);
    if (!channel) throw noChannel(input.id);
    await channelsChanged(ctx.services.db, notifications.tenant);
    ctx.services.logger.info(
      { channel_id: input.id, tenant: notifications.tenant, by: ctx.auth.name },
      "notification channel updated",
    );
    return { channel };
  });

/** `notifications.channels.delete({ tenant?, id })` → `{ deleted: true }` (its pending deliveries dropped, the log kept). @throws AppError NOT_FOUND (field `id`). */
export const notificationsChannelsDeleteProcedure = adminProcedure
  .input(channelIdInput)
  .mutation(async ({ ctx, input }): Promise<{ deleted: boolean }> => {
    const notifications = await tenantNotifications(ctx, input.tenant);
    if (!(await notifications.deleteChannel(input.id))) throw noChannel(input.id);
    await channelsChanged(ctx.services.db, notifications.tenant);
    ctx.services.logger.info(
      { channel_id: input.id, tenant: notifications.tenant, by: ctx.auth.name },
      "notification channel deleted",
    );
    return { deleted: true };
  });

/**
 * `notifications.channels.test({ tenant?, id })` → `{ eventId, deliveryId }`: raises a `test` event
 * for this one channel (also when it is disabled); the delivery loop sends it within about a second.
 * @throws AppError NOT_FOUND (field `id`).
 */
export const notificationsChannelsTestProcedure = adminProcedure
  .input(channelIdInput)
  .mutation(async ({ ctx, input }): Promise<{ eventId: NotificationEvent["id"]; deliveryId: string }> => {
    const notifications = await tenantNotifications(ctx, input.tenant);
    const sent = await notifications.sendTest(input.id);
    if (!sent) throw noChannel(input.id);
    ctx.services.logger.info(
      { channel_id: input.id, event_id: sent.event.id, delivery_id: sent.deliveryId, by: ctx.auth.name },
      "notification test queued",
    );
    return { eventId: sent.event.id, deliveryId: sent.deliveryId };
  });
