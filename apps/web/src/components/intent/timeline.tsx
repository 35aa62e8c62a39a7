"use client";

import { TenantLink } from "~/components/tenant-filter";
import { useDisplayZone } from "~/components/time-zone-toggle";
import { formatDuration, formatTime, splitEpochFields } from "~/lib/format";
import { intentPath, runPath } from "~/lib/search";
import { eventFacts, formatClock, formatOffset, type MatchOwner, matchOwners, timelineLines } from "~/lib/timeline";
import type { TimelineEvent } from "~/trpc/types";
import styles from "./timeline.module.css";

/** JSON with each `…EpochMs` number shown as a time with its zone (the raw value in its title). */
function JsonWithTimes({ value }: { value: unknown }) {
  const zone = useDisplayZone();
  return (
    <pre>
      {splitEpochFields(value).map((part, i) =>
        typeof part === "string" ? (
          part
        ) : (
          // biome-ignore lint/suspicious/noArrayIndexKey: the parts are positional and never reorder
          <time key={i} dateTime={new Date(part.epochMs).toISOString()} title={String(part.epochMs)}>
            {formatTime(part.epochMs, zone)}
          </time>
        ),
      )}
    </pre>
  );
}

/**
 * The records an identity match may belong to, each a link to its run and its record (the reason of
 * an AMBIGUOUS_IDENTITY_MATCH names them; the probe event carries them as `owners`).
 */
export function MatchOwnerLinks({ owners }: { owners: MatchOwner[] }) {
  if (!owners.length) return null;
  return (
    <span data-testid="match-owners">
      {" "}
      (may be{" "}
      {owners.map((o, i) => (
        <span key={o.key}>
          {i > 0 ? ", " : ""}
          <TenantLink href={intentPath(o.key)}>step {o.stepId}</TenantLink> of run{" "}
          <TenantLink href={runPath(o.runId)} data-testid="match-owner-run">
            {o.runId}
          </TenantLink>
        </span>
      ))}
      )
    </span>
  );
}

/**
 * A record's timeline read like an event history: one line per event — its time (to the ms), the
 * offset from the previous event, its type and main facts, the duration it ends (a send's, a
 * probe's) — and its JSON folded under it. An ordered list, so order and count are announced.
 */
export function Timeline({ events }: { events: TimelineEvent[] }) {
  const zone = useDisplayZone();
  if (!events.length) return <p className="muted">No events recorded.</p>;
  return (
    <ol className={styles.list} aria-label="Timeline">
      {timelineLines(events).map(({ event, offsetMs, duration }) => {
        const data = event.data as Record<string, unknown>;
        const who =
          typeof data.actorName === "string" ? data.actorName : typeof data.actor === "string" ? data.actor : null;
        const why = typeof data.note === "string" ? data.note : typeof data.why === "string" ? data.why : null;
        return (
          <li key={event.id} className={styles.item} data-testid="event" data-type={event.type}>
            <div className={styles.line} data-testid="event-line">
              <time
                dateTime={new Date(event.atEpochMs).toISOString()}
                title={formatTime(event.atEpochMs, zone)}
                data-testid="event-time"
              >
                {formatClock(event.atEpochMs, zone)}
              </time>
              <span className={styles.offset} data-testid="event-offset" title="since the previous event">
                {offsetMs === null ? "start" : formatOffset(offsetMs)}
              </span>
              <span className={styles.type}>{event.type.replaceAll("_", " ")}</span>
              <span className={styles.facts}>
                {eventFacts(event.type, data)}
                {who ? (
                  <>
                    {" "}
                    by <strong>{who}</strong>
                  </>
                ) : null}
                {why ? <> — “{why}”</> : null}
                <MatchOwnerLinks owners={matchOwners(data)} />
              </span>
              <span className={styles.duration} data-testid="event-duration">
                {duration ? `${duration.what}: ${formatDuration(duration.ms)}` : ""}
              </span>
            </div>
            {Object.keys(data).length ? (
              <details className={styles.more}>
                <summary>JSON</summary>
                <JsonWithTimes value={data} />
              </details>
            ) : null}
          </li>
        );
      })}
    </ol>
  );
}
