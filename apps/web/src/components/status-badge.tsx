import { statusLook } from "~/lib/status";
import type { IntentStatus } from "~/trpc/types";

/** A record's status as an icon and words (never colour alone). */
export function StatusBadge({ status, testId }: { status: IntentStatus; testId?: string }) {
  const look = statusLook(status);
  return (
    <span className={`status tone-${look.tone}`} data-testid={testId}>
      <span className="icon" aria-hidden="true">
        {look.icon}
      </span>
      {look.label}
    </span>
  );
}
