/**
 * Notifications (issue 23 §3): the ports the service uses for channels, the outbox and the delivery
 * log. Events are written to the outbox in the same transaction as the change that raised them (the
 * record entering the human queue, a compensation failing, evidence contradicting a settled record
 * or a person's decision — database triggers on `intent_records`), or by
 * {@link NotificationOutbox.raiseConditions} for conditions read from the rollups (a tool's UNKNOWN
 * share over its threshold, stale PENDING records). Every event has a stable id; a delivery (one
 * event, or a group of events of one kind for one channel) has a stable id too, sent as the
 * receiver's deduplication key (`Idempotency-Key`). Times are epoch ms.
 */

/** What happened. `test`: a channel's "send test" action. */
export const NOTIFICATION_EVENT_KINDS = [
  "human_queue",
  "compensation_failed",
  "evidence_contradicts",
  "unknown_share",
  "stale_pending",
  "test",
] as const;
/** One of {@link NOTIFICATION_EVENT_KINDS}. */
export type NotificationEventKind = (typeof NOTIFICATION_EVENT_KINDS)[number];

/** How a channel delivers: a signed webhook, a Slack incoming webhook, e-mail over SMTP. */
export const NOTIFICATION_CHANNEL_KINDS = ["webhook", "slack", "email"] as const;
/** One of {@link NOTIFICATION_CHANNEL_KINDS}. */
export type NotificationChannelKind = (typeof NOTIFICATION_CHANNEL_KINDS)[number];

/** A channel as listed (never its secret). */
export interface NotificationChannel {
  /** `nch_…`, unique across tenants. */
  id: string;
  tenant: string;
  kind: NotificationChannelKind;
  /** A person's label, 1–100 characters. */
  name: string;
  /** webhook and slack: the URL posted to (a Slack URL is shown only to admins, as every channel). */
  url: string | null;
  /** email: the recipients' addresses (1–20). */
  to: string[] | null;
  /** The event kinds it receives (`test` is always delivered to the channel it was sent for). */
  events: NotificationEventKind[];
  enabled: boolean;
  /** webhook: the first characters of its signing secret (`whsec_` + 4), to recognise it; else null. */
  secretPrefix: string | null;
  createdAtEpochMs: number;
}

/** One event of the outbox. */
export interface NotificationEvent {
  /** `nev_…`, stable: the same change never raises two ids. */
  id: string;
  tenant: string;
  kind: NotificationEventKind;
  occurredAtEpochMs: number;
  /**
   * What it is about, per kind (JSON):
   * - `human_queue`, `evidence_contradicts`, `compensation_failed` (raised by the triggers on
   *   `intent_records`): `{ key, runId, stepId, tool, attempt, status, needsHuman, code, message,
   *   compensatedKey }` — `code`/`message` the record's error (reason code, e.g. `NO_PROBE`,
   *   `CONTRADICTING_EVIDENCE`; null when none; message cut at 500 characters), `compensatedKey` the
   *   undone record's key for a compensation (`compensate:<key>` / `correct:<key>` step; a compensation
   *   refused before its record was written is raised by the original itself: its own key), else null;
   * - `unknown_share`: `{ tool, calls, unknown, share, threshold, windowMs }`;
   * - `stale_pending`: `{ count, oldestLeaseEndedAtEpochMs }`;
   * - `test`: `{ channelId, channelName, message }`.
   */
  subject: Record<string, unknown>;
}

/** Where a delivery stands. `failed`: gave up after the attempts allowed (shown in the log). */
export type NotificationDeliveryStatus = "pending" | "delivered" | "failed";

/** One delivery to one channel: one event, or a group of events of one kind. */
export interface NotificationDelivery {
  /** `ndl_…`, stable: the receiver's deduplication key (webhook `Idempotency-Key`). */
  id: string;
  tenant: string;
  channelId: string;
  kind: NotificationEventKind;
  /** The events it carries (one unless grouped), oldest first. */
  eventIds: string[];
  status: NotificationDeliveryStatus;
  attempts: number;
  /** When it is tried next (pending), else null. */
  nextAttemptAtEpochMs: number | null;
  /** The last attempt's failure, readable (no secret), or null. */
  lastError: string | null;
  deliveredAtEpochMs: number | null;
  createdAtEpochMs: number;
}

/** A page of the delivery log, newest first. */
export interface NotificationDeliveryPage {
  items: NotificationDelivery[];
  /** Opaque; pass back for the next page. Null at the end. */
  nextCursor: string | null;
}

/** Input of {@link TenantNotifications.createChannel}. */
export interface CreateChannelInput {
  kind: NotificationChannelKind;
  name: string;
  url?: string | undefined;
  to?: string[] | undefined;
  /** @default every kind but `test` */
  events?: NotificationEventKind[] | undefined;
}

/** One tenant's channels and delivery log (admins configure them through the API). */
export interface TenantNotifications {
  readonly tenant: string;
  /**
   * Creates a channel. @returns it and, for a webhook, its signing secret `whsec_<base64url>` (shown
   * once; stored to sign, never listed). @throws TypeError naming the field and the rule.
   */
  createChannel(input: CreateChannelInput): Promise<{ channel: NotificationChannel; secret: string | null }>;
  /** This tenant's channels, oldest first. */
  listChannels(): Promise<NotificationChannel[]>;
  /** One channel of this tenant, or null (another tenant's reads as null). */
  getChannel(id: string): Promise<NotificationChannel | null>;
  /** Changes name, events or enabled. @returns the channel, or null when not this tenant's. @throws TypeError. */
  updateChannel(
    id: string,
    patch: { name?: string; events?: NotificationEventKind[]; enabled?: boolean },
  ): Promise<NotificationChannel | null>;
  /** Deletes a channel (its pending deliveries are dropped, the log kept). @returns whether there was one. */
  deleteChannel(id: string): Promise<boolean>;
  /** Raises a `test` event for one channel (one delivery). @returns null when not this tenant's channel. */
  sendTest(channelId: string): Promise<{ event: NotificationEvent; deliveryId: string } | null>;
  /** The delivery log, newest first (`limit` 1–200, default 50). @throws RangeError for a foreign cursor. */
  listDeliveries(query?: {
    channelId?: string;
    status?: NotificationDeliveryStatus;
    cursor?: string;
    limit?: number;
  }): Promise<NotificationDeliveryPage>;
  /** True when an enabled channel receives `kind` (what the envelope's `action_taken` says). */
  hasChannelFor(kind: NotificationEventKind): Promise<boolean>;
}

/** A delivery taken for sending, with what the sender needs. */
export interface ClaimedDelivery {
  delivery: NotificationDelivery;
  channel: NotificationChannel;
  /** webhook: the signing secret; else null. Never logged. */
  secret: string | null;
  /** The events, oldest first. */
  events: NotificationEvent[];
  /** The lease's end: another worker may take the delivery after it (epoch ms, the database's clock). */
  leaseUntilEpochMs: number;
}

/** The delivery side, across tenants (the service's delivery loop). */
export interface NotificationOutbox {
  /**
   * Takes up to `limit` due deliveries under a lease of `leaseMs` (`FOR UPDATE SKIP LOCKED`: replicas
   * take different ones). Fans new events out to their channels first, grouping a burst: an event of a
   * kind arriving within `groupWindowMs` of the last delivery of that kind to a channel joins one
   * grouped delivery sent when the window ends.
   */
  claimDue(options: { limit: number; leaseMs: number; groupWindowMs: number }): Promise<ClaimedDelivery[]>;
  /**
   * Records an attempt's result: delivered, or failed with the next attempt's time (null: give up).
   * `fence.attempt` — the claimed delivery's `attempts` — makes the result count only while no later
   * claim took the delivery: a worker whose lease ran out and whose delivery another worker claimed
   * (which counted a further attempt) has its late result ignored, so it can neither reschedule nor
   * close a delivery someone else holds. Without `fence` the result is not fenced (tests, tools).
   * @returns whether the result was recorded (false: the delivery was not pending, or claimed again).
   */
  complete(
    deliveryId: string,
    result: { delivered: true } | { delivered: false; error: string; retryAtEpochMs: number | null },
    fence?: { attempt: number },
  ): Promise<boolean>;
  /**
   * Where a channel's notifications go, read now for the internal tools' `invoke` (issue 23 §3): the
   * records' arguments never carry the URL nor the signing secret, so any replica's sweeper that
   * reconciles or resends a `tristate.notify.*` record reads them here. `url` for webhook and Slack
   * channels, `secret` for webhooks, `to` for e-mail; `enabled` as stored (a resend of an attempt
   * already made still goes to a disabled channel; nothing new is claimed for it).
   * @returns null when `tenant` has no channel `channelId` (deleted, or another tenant's).
   */
  channelTarget(
    tenant: string,
    channelId: string,
  ): Promise<{
    kind: NotificationChannelKind;
    url: string | null;
    secret: string | null;
    to: string[] | null;
    enabled: boolean;
  } | null>;
  /**
   * Raises condition events read from the rollups and live counts: a tool's UNKNOWN share over
   * `unknownShareThreshold` (with at least `minCalls` calls) in the last `windowMs`; stale PENDING
   * records. Edge-triggered: one event when a condition starts, none while it lasts. @returns the new events.
   */
  /**
   * Deletes what the log no longer needs (added by the database side; optional for the service to call,
   * e.g. hourly): delivered and failed deliveries created more than `olderThanMs` ago, and events fanned
   * out more than `olderThanMs` ago that no pending delivery carries. At most `limit` rows of each
   * (default 10 000) per call. @returns how many of each were deleted.
   */
  purge(options: { olderThanMs: number; limit?: number }): Promise<{ deliveries: number; events: number }>;
  raiseConditions(options: {
    unknownShareThreshold: number;
    minCalls: number;
    windowMs: number;
  }): Promise<NotificationEvent[]>;
}
