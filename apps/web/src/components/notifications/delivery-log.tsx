"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import { createColumnHelper } from "@tanstack/react-table";
import { useId } from "react";
import { type Columns, DataTable } from "~/components/data-table";
import { useLiveInterval } from "~/components/live-refresh";
import { EmptyState, ErrorState, Loading, NoResults } from "~/components/states";
import { Time } from "~/components/time-zone-toggle";
import {
  DELIVERY_STATUSES,
  type DeliveryStatus,
  eventKindLabel,
  failedDeliveriesSummary,
  type NotificationChannel,
  type NotificationDelivery,
} from "~/lib/notifications";
import { useTRPC, useTRPCClient } from "~/trpc/react";
import { DeliveryStatusBadge } from "./delivery-status";
import styles from "./notifications.module.css";

/** Deliveries per page of the log. */
const PAGE_SIZE = 50;

/** What the status cell says beside the badge: when delivered, the next attempt, or the last error. */
function StatusDetail({ delivery }: { delivery: NotificationDelivery }) {
  switch (delivery.status) {
    case "delivered":
      return (
        <span className="small muted">
          at <Time epochMs={delivery.deliveredAtEpochMs} />
        </span>
      );
    case "pending":
      return (
        <span className="small">
          next attempt <Time epochMs={delivery.nextAttemptAtEpochMs} />
          {delivery.lastError ? <span className="block muted">last error: {delivery.lastError}</span> : null}
        </span>
      );
    case "failed":
      return (
        <span className="small flag block">
          gave up{delivery.lastError ? `; last error: ${delivery.lastError}` : " (no error recorded)"}
        </span>
      );
  }
}

const col = createColumnHelper<NotificationDelivery>();

function logColumns(channelName: (id: string) => string, showChannel: boolean): Columns<NotificationDelivery> {
  return [
    col.accessor("createdAtEpochMs", { header: "Time", cell: (c) => <Time epochMs={c.getValue()} /> }),
    ...(showChannel
      ? [
          col.accessor((d) => channelName(d.channelId), {
            id: "channel",
            header: "Channel",
            meta: { testId: "channel" },
          }),
        ]
      : []),
    col.accessor("kind", {
      header: "Event",
      meta: { testId: "delivery-kind" },
      cell: (c) => (
        <span title={eventKindLabel(c.getValue())}>
          <span className="mono small">{c.getValue()}</span>
        </span>
      ),
    }),
    col.accessor((d) => d.eventIds.length, {
      id: "events",
      header: "Events",
      meta: { numeric: true, testId: "delivery-events" },
      cell: (c) => (c.getValue() > 1 ? `${c.getValue()} (grouped)` : c.getValue()),
    }),
    col.accessor("status", {
      header: "Status",
      enableSorting: false,
      cell: (c) => (
        <span className={styles["error-cell"]}>
          <DeliveryStatusBadge delivery={c.row.original} /> <StatusDetail delivery={c.row.original} />
        </span>
      ),
    }),
    col.accessor("attempts", { header: "Attempts", meta: { numeric: true, testId: "delivery-attempts" } }),
    col.accessor("id", {
      header: "Delivery id",
      enableSorting: false,
      cell: (c) => <span className="mono small">{c.getValue()}</span>,
    }),
  ];
}

/** What the delivery log shows. */
interface LogProps {
  tenant: string;
  /** The tenant's channels (names for the Channel column and the filter). */
  channels: NotificationChannel[];
  channelId: string | undefined;
  status: DeliveryStatus | undefined;
  /** Shows the log with other filters (the page puts them in the URL). */
  onFilter: (filter: { channel?: string; status?: DeliveryStatus }) => void;
}

/** The log's filters: one channel or all (a deleted channel by its id), and a status. */
function LogFilters({
  channels,
  channelId,
  status,
  onFilter,
}: Pick<LogProps, "channels" | "channelId" | "status" | "onFilter">) {
  const ids = { channel: useId(), status: useId() };
  const current = channelId ? channels.find((c) => c.id === channelId) : undefined;
  return (
    <div className="toolbar">
      <label className="field">
        <span>Channel</span>
        <select
          id={ids.channel}
          value={channelId ?? ""}
          onChange={(e) => onFilter({ channel: e.currentTarget.value || undefined, ...(status ? { status } : {}) })}
        >
          <option value="">All channels</option>
          {channelId && !current ? <option value={channelId}>{channelId} (deleted)</option> : null}
          {channels.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span>Status</span>
        <select
          id={ids.status}
          value={status ?? ""}
          onChange={(e) =>
            onFilter({
              ...(channelId ? { channel: channelId } : {}),
              status: (e.currentTarget.value || undefined) as DeliveryStatus | undefined,
            })
          }
        >
          <option value="">any</option>
          {DELIVERY_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}

/**
 * The delivery log, newest first, for one channel or all: time, channel, event kind, how many events
 * (grouped), status (delivered; pending with its next attempt; failed with its last error), attempts;
 * keyset paging ("Load older deliveries"). The filters live in the URL (`channel`, `status`).
 */
export function DeliveryLog({ tenant, channels, channelId, status, onFilter }: LogProps) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const live = useLiveInterval();
  const headingId = useId();
  const query = { tenant, ...(channelId ? { channelId } : {}), ...(status ? { status } : {}) };
  // Pages by cursor, fetched with the plain client (the input's cursor is the page parameter).
  const log = useInfiniteQuery({
    queryKey: [...trpc.notifications.deliveries.list.queryKey(query), "pages"],
    queryFn: ({ pageParam }) =>
      client.notifications.deliveries.list.query({
        ...query,
        limit: PAGE_SIZE,
        ...(pageParam ? { cursor: pageParam } : {}),
      }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
    refetchInterval: live(5_000),
  });
  const items = log.data?.pages.flatMap((p) => p.items) ?? [];
  const names = new Map(channels.map((c) => [c.id, c.name]));
  const channelName = (id: string) => names.get(id) ?? `${id} (deleted)`;
  // Why they failed, in the deliveries' own words (a deleted channel, an HTTP status…), never assumed.
  const failedLine = failedDeliveriesSummary(items);
  const current = channelId ? channels.find((c) => c.id === channelId) : undefined;

  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId}>Delivery log{current ? ` of “${current.name}”` : channelId ? ` of ${channelId}` : ""}</h2>
      <LogFilters channels={channels} channelId={channelId} status={status} onFilter={onFilter} />
      {log.error ? <ErrorState error={log.error} title="Could not load the delivery log" /> : null}
      {log.isPending ? <Loading what="the delivery log" /> : null}
      {log.data && items.length === 0 ? (
        channelId || status ? (
          <NoResults>No delivery matches these filters.</NoResults>
        ) : (
          <EmptyState>Nothing was sent yet. “Send test” on a channel shows its first delivery here.</EmptyState>
        )
      ) : null}
      {failedLine && status !== "failed" ? (
        <p className="flag" data-testid="failed-count">
          {failedLine}
        </p>
      ) : null}
      {items.length ? (
        <DataTable
          label="Delivery log"
          data={items}
          columns={logColumns(channelName, !channelId)}
          rowProps={(row) => ({
            "data-testid": "delivery-row",
            "data-delivery-id": row.original.id,
            "data-status": row.original.status,
          })}
        />
      ) : null}
      {log.hasNextPage ? (
        <div className="pager">
          <button type="button" onClick={() => log.fetchNextPage()} disabled={log.isFetchingNextPage}>
            Load older deliveries
          </button>
        </div>
      ) : null}
    </section>
  );
}
