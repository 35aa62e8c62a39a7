/**
 * The rules of a notification channel's fields (issue 23 §3), checked by the database side whatever
 * calls it (the API checks the same before). A broken rule is a TypeError naming the field and the
 * rule, e.g. `url: must be an absolute http(s) URL`.
 */
import { z } from "zod";
import {
  type CreateChannelInput,
  NOTIFICATION_CHANNEL_KINDS,
  NOTIFICATION_EVENT_KINDS,
  type NotificationChannelKind,
  type NotificationEventKind,
} from "./ports.ts";

/** The kinds a channel may subscribe to: every kind but `test` (always delivered to its own channel). */
export const SUBSCRIBABLE_EVENT_KINDS = NOTIFICATION_EVENT_KINDS.filter(
  (k): k is Exclude<NotificationEventKind, "test"> => k !== "test",
);

const name = z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters");

const events = z
  .array(z.enum(SUBSCRIBABLE_EVENT_KINDS, `must each be one of ${SUBSCRIBABLE_EVENT_KINDS.join(", ")}`))
  .min(1, "must list at least one event kind")
  .refine((kinds) => new Set(kinds).size === kinds.length, "must not list an event kind twice");

/**
 * A webhook's or Slack's URL: absolute, http or https (a Slack incoming webhook is
 * `https://hooks.slack.com/services/…`; any http(s) URL is taken so tests and proxies can receive it),
 * at most 2000 characters, without `user:password@`.
 */
const url = z
  .string()
  .max(2000, "must be at most 2000 characters")
  .refine((value) => {
    try {
      const parsed = new URL(value);
      return (parsed.protocol === "http:" || parsed.protocol === "https:") && parsed.hostname !== "";
    } catch {
      return false;
    }
  }, "must be an absolute http(s) URL")
  // fetch refuses a URL with credentials (it could never be delivered), and the URL is listed to
  // admins and shown in the dashboard: a receiver's credentials belong in its path or the signature.
  .refine((value) => {
    try {
      const parsed = new URL(value);
      return parsed.username === "" && parsed.password === "";
    } catch {
      return true;
    }
  }, "must not carry credentials (user:password@); put a token in the path, the webhook is signed");

const to = z
  .array(z.email("must each be an e-mail address").max(254, "must each be at most 254 characters"))
  .min(1, "must list at least one address")
  .max(20, "must list at most 20 addresses");

/**
 * The rule between `kind` and the target fields: a `webhook` or `slack` channel takes `url`, an
 * `email` channel takes `to`, and the other field is refused. One rule for the database side and the
 * API's schema (`superRefine` of either), each issue naming the field.
 */
export function checkChannelTarget(
  input: { kind: NotificationChannelKind; url?: string | undefined; to?: string[] | undefined },
  ctx: z.RefinementCtx,
): void {
  const [takes, refuses] = input.kind === "email" ? (["to", "url"] as const) : (["url", "to"] as const);
  const channel = `${input.kind === "email" ? "an" : "a"} ${input.kind} channel`;
  if (input[takes] === undefined)
    ctx.addIssue({ code: "custom", path: [takes], message: `is required for ${channel}` });
  if (input[refuses] !== undefined)
    ctx.addIssue({ code: "custom", path: [refuses], message: `is not taken by ${channel} (it uses ${takes})` });
}

/**
 * A channel's fields and their rules (`kind`; `name` 1–100 trimmed; `url` absolute http(s), ≤ 2000,
 * no credentials; `to` 1–20 addresses; `events` subscribable kinds, none twice), for the API's input
 * schema to reuse rather than restate.
 */
export const CHANNEL_FIELDS = {
  kind: z.enum(NOTIFICATION_CHANNEL_KINDS, `must be one of ${NOTIFICATION_CHANNEL_KINDS.join(", ")}`),
  name,
  url,
  to,
  events,
};

const createSchema = z
  .object({
    kind: CHANNEL_FIELDS.kind,
    name,
    url: url.optional(),
    to: to.optional(),
    events: events.optional(),
  })
  .superRefine(checkChannelTarget);

const patchSchema = z.object({
  name: name.optional(),
  events: events.optional(),
  enabled: z.boolean("must be a boolean").optional(),
});

/** The first issue of a failed parse as `field: rule` (the path joined with dots). */
function typeError(error: z.ZodError): TypeError {
  const issue = error.issues[0];
  const field = issue?.path.length ? issue.path.join(".") : "input";
  return new TypeError(`${field}: ${issue?.message ?? "is invalid"}`);
}

/** A channel to create, checked: `kind`, `name` (1–100, trimmed), `url` or `to`, `events` (default every subscribable kind). */
export interface CheckedChannel {
  kind: NotificationChannelKind;
  name: string;
  url: string | null;
  to: string[];
  events: NotificationEventKind[];
}

/**
 * Checks a channel to create.
 * @throws TypeError naming the field and the rule (`to: must list at most 20 addresses`).
 */
export function checkCreateChannel(input: CreateChannelInput): CheckedChannel {
  const parsed = createSchema.safeParse(input);
  if (!parsed.success) throw typeError(parsed.error);
  const v = parsed.data;
  return {
    kind: v.kind,
    name: v.name,
    url: v.url ?? null,
    to: v.to ?? [],
    events: v.events ?? [...SUBSCRIBABLE_EVENT_KINDS],
  };
}

/**
 * Checks a channel's change.
 * @throws TypeError naming the field and the rule.
 */
export function checkChannelPatch(patch: { name?: string; events?: NotificationEventKind[]; enabled?: boolean }): {
  name?: string | undefined;
  events?: NotificationEventKind[] | undefined;
  enabled?: boolean | undefined;
} {
  const parsed = patchSchema.safeParse(patch);
  if (!parsed.success) throw typeError(parsed.error);
  return parsed.data;
}
