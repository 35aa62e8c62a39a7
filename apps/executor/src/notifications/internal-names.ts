/**
 * The names of Tristate's internal tools (issue 23 §3): reserved, never in a user catalog, never
 * listed or callable by agents. Kept apart from the tools themselves so the catalog loader can check
 * names without loading the senders.
 */
import type { NotificationChannelKind } from "@tristate/db";

/** Names reserved for Tristate's internal tools; a user catalog declaring one is refused. */
export const INTERNAL_TOOL_PREFIX = "tristate.";

/** True for a name reserved for an internal tool. */
export function isInternalToolName(name: string): boolean {
  return name.startsWith(INTERNAL_TOOL_PREFIX);
}

/** The internal tool of each channel kind. */
export const NOTIFY_TOOLS = {
  webhook: "tristate.notify.webhook",
  slack: "tristate.notify.slack",
  email: "tristate.notify.email",
} as const satisfies Record<NotificationChannelKind, string>;

/** The run of a channel's deliveries: `notify:<channelId>` (each delivery is a step, its id the step id). */
export function notifyRunId(channelId: string): string {
  return `notify:${channelId}`;
}
