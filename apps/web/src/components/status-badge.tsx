import { statusLook } from "~/lib/status";
import type { IntentStatus } from "~/trpc/types";

/** A record's status as an icon and its name (never colour alone); the title says it in words. */
export function StatusBadge({ status, testId }: { status: IntentStatus; testId?: string }) {
  const look = statusLook(status);
  return (
    <span className={`status tone-${look.tone}`} data-testid={testId} title={look.label}>
      <span className="icon" aria-hidden="true">
        {look.icon}
      </span>
      {status}
    </span>
  );
}
