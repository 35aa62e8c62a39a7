/**
 * The delivery loop (issue 23 §3): takes due deliveries from the outbox and sends each through the
 * tenant's own executor (`callInternal`, run `notify:<channelId>`, step = the delivery id), so a
 * notification is an intent record like any effect: classified, reconciled by the sweeper, in the
 * human queue when nothing can decide. Every replica may run it: deliveries are claimed under a lease
 * with `FOR UPDATE SKIP LOCKED`, and a delivery whose replica dies is claimed again after its lease —
 * the repeat call replays the record (or reconciles it), and the receiver drops a repeat by its
 * `Idempotency-Key`. Every `TRISTATE_NOTIFY_CONDITIONS_INTERVAL_MS` (30 s) it also raises the condition events (UNKNOWN share, stale PENDING),
 * and hourly it purges the delivery log of what is older than {@link DELIVERY_LOG_RETENTION_MS}.
 */
import { Deadline, type Envelope } from "@tristate/core";
import type { ClaimedDelivery, TristateDatabase } from "@tristate/db";
import type { Logger } from "../logger.ts";
import type { TristateMetrics } from "../metrics/index.ts";
import type { Tenants } from "../tenants.ts";
import { NOTIFY_TOOLS, notifyRunId } from "./internal-names.ts";
import { emailMessage, slackMessage, webhookBody } from "./render.ts";
import { NOTIFY_TIMEOUT_MS } from "./tools.ts";

/** Attempts ending FAILED_NO_EFFECT after which a delivery is given up (`failed` in the log). */
export const MAX_DELIVERY_ATTEMPTS = 15;
/** First retry delay, ms; it doubles per attempt up to {@link MAX_RETRY_DELAY_MS}, with jitter. */
export const FIRST_RETRY_DELAY_MS = 2_000;
/** Longest retry delay, ms (10 min). */
export const MAX_RETRY_DELAY_MS = 600_000;
/** How often the condition events are raised by default, ms (`TRISTATE_NOTIFY_CONDITIONS_INTERVAL_MS`). */
export const CONDITIONS_EVERY_MS = 30_000;
/** How long the delivery log keeps delivered and failed deliveries (and their events), ms: 30 days. */
export const DELIVERY_LOG_RETENTION_MS = 30 * 86_400_000;
/** How often the log is purged of what is older, ms (hourly). */
export const PURGE_EVERY_MS = 3_600_000;
/** The window the UNKNOWN share is measured over, ms (15 min), and the least calls it needs. */
export const UNKNOWN_SHARE_WINDOW_MS = 900_000;
export const UNKNOWN_SHARE_MIN_CALLS = 20;

/** Options of {@link startDeliveryLoop}. */
export interface DeliveryLoopOptions {
  db: Pick<TristateDatabase, "notificationOutbox">;
  tenants: Pick<Tenants, "executor">;
  /** Wait between rounds that found nothing, ms (> 0). */
  intervalMs: number;
  /** `TRISTATE_NOTIFY_GROUP_WINDOW_MS`. */
  groupWindowMs: number;
  /** `TRISTATE_NOTIFY_CONDITIONS_INTERVAL_MS`: how often condition events are checked, ms. @default 30000 */
  conditionsEveryMs?: number | undefined;
  /** `TRISTATE_UNKNOWN_SHARE_THRESHOLD` (0–1). */
  unknownShareThreshold: number;
  /** `TRISTATE_DASHBOARD_URL`. */
  dashboardUrl: string;
  /** The catalog's tools that declare `secretFields`: their records' error messages are withheld. */
  secretTools?: ReadonlySet<string> | undefined;
  logger: Logger;
  /** Counts each attempt (`tristate_notifications_total`, metrics/index.ts). */
  counter?: Pick<TristateMetrics, "notificationDelivered"> | undefined;
  /** Deliveries claimed per round. @default 20 */
  limit?: number;
  /** The claim's lease, ms: one send's deadline (15 s) and a margin. @default 20000 */
  leaseMs?: number;
}

/** A running loop. */
export interface DeliveryLoop {
  /** Ends the loop after the round in progress (its sends finish or are left to their lease). Never rejects. */
  stop(): Promise<void>;
}

/**
 * The next attempt's time after attempt `attempt` (1-based) did not deliver: `FIRST_RETRY_DELAY_MS ×
 * 2^(attempt−1)`, at most `MAX_RETRY_DELAY_MS`, times a jitter of 0.5–1 (so receivers that come back
 * are not hit by every replica at once), and not before the remote's `Retry-After`.
 */
export function retryDelayMs(attempt: number, retryAfterMs = 0, random: () => number = Math.random): number {
  const base = Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 2 ** Math.max(0, attempt - 1));
  return Math.max(Math.round(base * (0.5 + random() / 2)), retryAfterMs);
}

/**
 * Whether attempt `attempt` (1-based) with this outcome ends the delivery as `failed`: after
 * {@link MAX_DELIVERY_ATTEMPTS} attempts that did not deliver — FAILED_NO_EFFECT for every kind, and
 * UNKNOWN for a webhook too (each UNKNOWN attempt was resent with the same Idempotency-Key, so a
 * receiver answering 3xx or 5xx forever is given up, not retried every 10 minutes for ever). A Slack
 * or e-mail UNKNOWN waits for a person in the human queue and is never given up here.
 */
export function givesUp(
  status: Envelope["status"],
  kind: ClaimedDelivery["channel"]["kind"],
  attempt: number,
): boolean {
  if (attempt < MAX_DELIVERY_ATTEMPTS) return false;
  return status === "FAILED_NO_EFFECT" || (status === "UNKNOWN" && kind === "webhook");
}

/** The internal call's arguments for a claimed delivery: ids and the rendered message, never a URL or secret. */
export function deliveryArgs(
  claimed: ClaimedDelivery,
  dashboardUrl: string,
  secretTools: ReadonlySet<string> = new Set(),
): Record<string, unknown> {
  const ids = { channel_id: claimed.channel.id, delivery_id: claimed.delivery.id };
  switch (claimed.channel.kind) {
    case "webhook":
      return { ...ids, body: webhookBody(claimed, dashboardUrl, secretTools) };
    case "slack":
      return { ...ids, ...slackMessage(claimed, dashboardUrl) };
    case "email":
      return { ...ids, to: claimed.channel.to ?? [], ...emailMessage(claimed, dashboardUrl) };
  }
}

/** Logged when an attempt's result came after another worker claimed the delivery again. */
const LEASE_LOST = "notification result ignored: the lease ran out and another worker claimed the delivery";

/** Sends one claimed delivery and records the result. Never rejects (failures are logged). */
export async function deliverOne(options: DeliveryLoopOptions, claimed: ClaimedDelivery): Promise<Envelope | null> {
  const { delivery, channel } = claimed;
  const { outbox, log } = { outbox: options.db.notificationOutbox, log: options.logger };
  // The claim counted this attempt; it fences the result (a later claim's attempt wins).
  const attempt = delivery.attempts;
  const fence = { attempt };
  const meta = {
    tenant: delivery.tenant,
    channel_id: channel.id,
    delivery_id: delivery.id,
    kind: channel.kind,
    attempt,
  };
  try {
    const envelope = await options.tenants.executor(delivery.tenant).callInternal({
      runId: notifyRunId(channel.id),
      stepId: delivery.id,
      tool: NOTIFY_TOOLS[channel.kind],
      args: deliveryArgs(claimed, options.dashboardUrl, options.secretTools),
      deadline: Deadline.after(NOTIFY_TIMEOUT_MS + 5_000),
    });
    if (envelope.status === "SUCCEEDED") {
      if (!(await outbox.complete(delivery.id, { delivered: true }, fence))) log.warn(meta, LEASE_LOST);
      options.counter?.notificationDelivered(delivery.tenant, channel.kind, "delivered");
      log.info({ ...meta, events: delivery.eventIds.length }, "notification delivered");
      return envelope;
    }
    options.counter?.notificationDelivered(delivery.tenant, channel.kind, "failed");
    const error = `${envelope.status}: ${envelope.error?.message ?? envelope.action_taken}`.slice(0, 1000);
    // UNKNOWN: the record is being reconciled (the sweeper's same-key resend for a webhook, the human
    // queue for Slack and e-mail); the delivery stays pending and the next attempt reads how it settled.
    const giveUp = givesUp(envelope.status, channel.kind, attempt);
    const retryAtEpochMs = giveUp ? null : Date.now() + retryDelayMs(attempt, envelope.retry_after_ms ?? 0);
    if (!(await outbox.complete(delivery.id, { delivered: false, error, retryAtEpochMs }, fence))) {
      log.warn(meta, LEASE_LOST);
    }
    log.warn(
      { ...meta, status: envelope.status, error, retry_at: retryAtEpochMs },
      giveUp ? "notification given up" : "notification not delivered yet",
    );
    return envelope;
  } catch (err) {
    // The store failed (or the outcome could not be written): the lease runs out and a claim retries it.
    log.error({ ...meta, err }, "notification delivery failed; it is retried after its lease");
    return null;
  }
}

/**
 * Starts the loop: a round claims up to `limit` due deliveries and sends them at once; a full round
 * is followed by the next at once, else it waits `intervalMs`. Condition events are raised every
 * `conditionsEveryMs` (default {@link CONDITIONS_EVERY_MS}).
 */
export function startDeliveryLoop(options: DeliveryLoopOptions): DeliveryLoop {
  const limit = options.limit ?? 20;
  const leaseMs = options.leaseMs ?? 20_000;
  const conditionsEveryMs = options.conditionsEveryMs ?? CONDITIONS_EVERY_MS;
  let stopped = false;
  let wake: (() => void) | null = null;
  let lastConditionsMs = Number.NEGATIVE_INFINITY;
  let lastPurgeMs = Number.NEGATIVE_INFINITY;
  const round = async (): Promise<number> => {
    if (performance.now() - lastPurgeMs >= PURGE_EVERY_MS) {
      lastPurgeMs = performance.now();
      const purged = await options.db.notificationOutbox.purge({ olderThanMs: DELIVERY_LOG_RETENTION_MS });
      if (purged.deliveries + purged.events > 0) options.logger.info(purged, "notification log purged");
    }
    if (performance.now() - lastConditionsMs >= conditionsEveryMs) {
      lastConditionsMs = performance.now();
      const raised = await options.db.notificationOutbox.raiseConditions({
        unknownShareThreshold: options.unknownShareThreshold,
        minCalls: UNKNOWN_SHARE_MIN_CALLS,
        windowMs: UNKNOWN_SHARE_WINDOW_MS,
      });
      for (const e of raised)
        options.logger.info({ tenant: e.tenant, event_id: e.id, kind: e.kind }, "condition event raised");
    }
    const claimed = await options.db.notificationOutbox.claimDue({
      limit,
      leaseMs,
      groupWindowMs: options.groupWindowMs,
    });
    await Promise.all(claimed.map((c) => deliverOne(options, c)));
    return claimed.length;
  };
  const running = (async () => {
    while (!stopped) {
      let taken = 0;
      try {
        taken = await round();
      } catch (err) {
        options.logger.error({ err }, "notification delivery round failed");
      }
      if (stopped || taken >= limit) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.intervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  })();
  return {
    async stop() {
      stopped = true;
      (wake as (() => void) | null)?.();
      await running;
    },
  };
}
