import { deliveryStatusLook, type NotificationDelivery } from "~/lib/notifications";

/**
 * A delivery's status as an icon and its word (never colour alone), in the tones of the record
 * statuses: delivered green, retrying amber, failed red; the title says it in words.
 */
export function DeliveryStatusBadge({ delivery }: { delivery: Pick<NotificationDelivery, "status" | "attempts"> }) {
  const look = deliveryStatusLook(delivery);
  return (
    <span
      className={`status tone-${look.tone}`}
      title={look.label}
      data-testid="delivery-status"
      data-status={delivery.status}
    >
      <span className="icon" aria-hidden="true">
        {look.icon}
      </span>
      {delivery.status}
    </span>
  );
}
