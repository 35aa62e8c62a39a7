import type { StateLook } from "~/lib/step-state";
import styles from "./state-badge.module.css";

const TONES: Record<string, string | undefined> = {
  ok: styles.ok,
  none: styles.none,
  flight: styles.flight,
  warn: styles.warn,
  person: styles.person,
  undone: styles.undone,
  bad: styles.bad,
};

/**
 * The badge of a step's or a run's state: its icon and words in the state's own colour (never colour
 * alone); `title` says more (e.g. why), `data-state` carries the state for tests.
 */
export function StateBadge({
  look,
  state,
  title,
  testId,
  large = false,
}: {
  look: StateLook;
  state: string;
  title?: string;
  testId?: string;
  large?: boolean;
}) {
  const className = [styles.badge, TONES[look.tone], large ? styles.large : undefined].filter(Boolean).join(" ");
  return (
    <span className={className} data-testid={testId} data-state={state} title={title}>
      <span className={styles.icon} aria-hidden="true">
        <span>{look.icon}</span>
      </span>
      {look.label}
    </span>
  );
}
