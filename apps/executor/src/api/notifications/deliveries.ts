/** `notifications.deliveries.list` (admin keys only; issue 23 §3): a tenant's delivery log. */
import type { NotificationDeliveryPage } from "@tristate/db";
import { AppError } from "../../app-error.ts";
import { adminProcedure } from "../../trpc/init.ts";
import { tenantNotifications } from "./channels.ts";
import { deliveriesListInput } from "./schemas.ts";

/**
 * `notifications.deliveries.list({ tenant?, channelId?, status?, cursor?, limit? })` → a page of
 * deliveries, newest first, with their attempts, next attempt and last error (`failed`: given up).
 * @throws AppError BAD_INPUT (field `cursor`) for a cursor this list did not return.
 */
export const notificationsDeliveriesListProcedure = adminProcedure
  .input(deliveriesListInput)
  .query(async ({ ctx, input }): Promise<NotificationDeliveryPage> => {
    const notifications = await tenantNotifications(ctx, input?.tenant);
    try {
      return await notifications.listDeliveries({
        ...(input?.channelId !== undefined ? { channelId: input.channelId } : {}),
        ...(input?.status !== undefined ? { status: input.status } : {}),
        ...(input?.cursor !== undefined ? { cursor: input.cursor } : {}),
        ...(input?.limit !== undefined ? { limit: input.limit } : {}),
      });
    } catch (error) {
      if (error instanceof RangeError) {
        throw new AppError("BAD_INPUT", `cursor: ${error.message}`, { field: "cursor" });
      }
      throw error;
    }
  });
