import type { IntentStatus, OperatorAction, Resolution, Role } from "~/trpc/types";
import { everyMember } from "./every-member";

/** How a status is shown: an icon (never alone) and words. */
export interface StatusLook {
  icon: string;
  label: string;
  tone: "ok" | "warn" | "bad" | "muted";
}

/** The look of a record's status. */
export function statusLook(status: IntentStatus): StatusLook {
  switch (status) {
    case "SUCCEEDED":
      return { icon: "✓", label: "Succeeded", tone: "ok" };
    case "FAILED_NO_EFFECT":
      return { icon: "✕", label: "Failed, no effect", tone: "muted" };
    case "UNKNOWN":
      return { icon: "?", label: "Unknown", tone: "warn" };
    case "PENDING":
      return { icon: "…", label: "Pending", tone: "muted" };
  }
}

/** A resolution in words. */
export function resolutionLabel(resolution: Resolution | null): string {
  switch (resolution) {
    case null:
      return "–";
    case "found":
      return "found by a probe";
    case "absent_resent":
      return "absent → resent";
    case "human_confirmed_effect":
      return "a person confirmed it happened";
    case "human_confirmed_no_effect":
      return "a person confirmed it did not happen";
    case "human_resent":
      return "a person resent it";
    case "needs_human":
      return "waiting for a person";
  }
}

/** The four operator actions, in keyboard order (1–4). */
export const OPERATOR_ACTIONS = everyMember<OperatorAction>({
  confirm_effect: true,
  confirm_no_effect: true,
  resend_same_key: true,
  compensate: true,
});

/** The button label of an action (the names the e2e tests use). */
export function actionLabel(action: OperatorAction): string {
  switch (action) {
    case "confirm_effect":
      return "Confirm it happened";
    case "confirm_no_effect":
      return "Confirm it did not happen";
    case "resend_same_key":
      return "Resend with the same key";
    case "compensate":
      return "Compensate";
  }
}

/**
 * Why an action is not available for a queue item, or null when it is. Compensation reverses a
 * confirmed effect only (an UNKNOWN is never compensated: rule 6); a resend follows the executor's
 * own refusal (e.g. read-only tools).
 */
export function actionUnavailable(
  action: OperatorAction,
  item: {
    status: string;
    resendAllowed?: boolean;
    resendRefusal?: string | null;
    /** From `tools.list` (undefined while unknown): whether the tool declares a compensation. */
    toolHasCompensation?: boolean;
    /** From `tools.list`: an irreversible tool is undone by its corrective action, when it declares one. */
    toolIrreversible?: boolean;
  },
): string | null {
  if (action === "compensate" && item.toolHasCompensation === false && item.toolIrreversible === false) {
    return "This tool declares no compensation (and no corrective action): nothing here can undo its effect; correct it by hand if needed.";
  }
  if (action === "compensate" && item.status !== "SUCCEEDED") {
    return "Only a confirmed effect can be compensated; settle this one first.";
  }
  // A SUCCEEDED record in the queue (an aborted run's effect nothing declared can undo) waits to be
  // corrected by hand: its effect is confirmed, so "it did not happen" would be a false record.
  if (action === "confirm_no_effect" && item.status === "SUCCEEDED")
    return "Its effect is confirmed (SUCCEEDED): correct it by hand, then confirm it happened to clear it from the queue.";
  if (action === "resend_same_key" && item.resendAllowed === false)
    return item.resendRefusal ?? "Resend is not allowed here.";
  return null;
}

/** A tool's compensation facts from `tools.list`, as `actionUnavailable` takes them (nothing while unknown). */
export function toolCompensation(
  tools: readonly { name: string; hasCompensation: boolean; irreversible: boolean }[] | undefined,
  tool: string,
): { toolHasCompensation?: boolean; toolIrreversible?: boolean } {
  const info = tools?.find((t) => t.name === tool);
  return info ? { toolHasCompensation: info.hasCompensation, toolIrreversible: info.irreversible } : {};
}

/** Whether a role may act on records (the API refuses the others anyway). */
export function canOperate(role: Role): boolean {
  switch (role) {
    case "operator":
    case "admin":
      return true;
    case "viewer":
    case "agent":
      return false;
  }
}
