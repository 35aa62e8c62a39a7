"use client";

import { useMutation, useQueries, useQueryClient } from "@tanstack/react-query";
import { createColumnHelper } from "@tanstack/react-table";
import Link from "next/link";
import { type FormEvent, useId, useMemo, useState } from "react";
import { type Columns, DataTable } from "~/components/data-table";
import { useLiveInterval } from "~/components/live-refresh";
import { RequestIdLine } from "~/components/states";
import { Time } from "~/components/time-zone-toggle";
import { useModalDialog } from "~/components/use-modal-dialog";
import {
  channelKindLabel,
  channelTarget,
  channelTargetParts,
  eventKindLabel,
  type NotificationChannel,
  type NotificationDelivery,
} from "~/lib/notifications";
import { useTRPC } from "~/trpc/react";
import { DeliveryStatusBadge } from "./delivery-status";
import styles from "./notifications.module.css";

/** What a row action did, said above the table (`role="status"`) or as an alert. */
type Outcome = { ok: true; text: string } | { ok: false; error: unknown; text: string };

/** The dialog that asks before a channel is deleted (its pending deliveries dropped, the log kept). */
function DeleteDialog({
  channel,
  tenant,
  onClose,
  onDeleted,
}: {
  channel: NotificationChannel;
  tenant: string;
  onClose: () => void;
  onDeleted: () => void;
}) {
  const trpc = useTRPC();
  const remove = useMutation(trpc.notifications.channels.delete.mutationOptions());
  const dialogRef = useModalDialog();
  const titleId = useId();

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (remove.isPending) return;
    try {
      await remove.mutateAsync({ tenant, id: channel.id });
      onDeleted();
    } catch {
      // shown in the dialog
    }
  }

  return (
    <dialog ref={dialogRef} aria-labelledby={titleId} onClose={onClose} onCancel={onClose}>
      <form onSubmit={submit}>
        <h2 id={titleId}>Delete channel “{channel.name}”?</h2>
        <p>
          It stops receiving notifications at once; deliveries still pending for it are dropped. Its past deliveries
          stay in the log. This cannot be undone (a new channel gets a new{" "}
          {channel.kind === "webhook" ? "secret" : "id"}).
        </p>
        {remove.error ? (
          <div role="alert" className="error">
            {remove.error.message}
            <RequestIdLine error={remove.error} />
          </div>
        ) : null}
        <div className="dialog-buttons">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="danger" disabled={remove.isPending}>
            Delete channel
          </button>
        </div>
      </form>
    </dialog>
  );
}

const col = createColumnHelper<NotificationChannel>();

/** What the channel table's cells need: each channel's last delivery, its log's URL, the row actions. */
interface ChannelCells {
  lastById: Map<string, NotificationDelivery | null>;
  logHref: (channelId: string) => string;
  /** The channel whose action is under way (its buttons are disabled). */
  busyId: string | null;
  act: (channel: NotificationChannel, what: "test" | "toggle") => void;
  onDelete: (channel: NotificationChannel) => void;
}

/** The channel table's columns: kind, name, target, events, enabled, created, last delivery, actions. */
function channelColumns({ lastById, logHref, busyId, act, onDelete }: ChannelCells): Columns<NotificationChannel> {
  return [
    col.accessor("kind", { header: "Kind", cell: (c) => channelKindLabel(c.getValue()) }),
    col.accessor("name", { header: "Name", meta: { testId: "channel-name" } }),
    col.accessor((c) => channelTarget(c), {
      id: "target",
      header: "Target",
      // Each host or address unbroken (cut with an ellipsis when too long); lines wrap between them.
      cell: (c) => (
        <span className={`mono small ${styles["target-cell"]}`} title={c.getValue()}>
          {channelTargetParts(c.row.original).map((part, i, parts) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: two recipients may be the same address
            <span key={i} className={styles["target-part"]} data-testid="target-part">
              {part}
              {i < parts.length - 1 ? "," : ""}
            </span>
          ))}
        </span>
      ),
    }),
    col.accessor((c) => c.events.join(", "), {
      id: "events",
      header: "Events",
      enableSorting: false,
      cell: (c) => (
        <span className="small" title={c.row.original.events.map(eventKindLabel).join("; ")}>
          {c.getValue()}
        </span>
      ),
    }),
    col.accessor("enabled", {
      header: "Enabled",
      meta: { testId: "channel-enabled" },
      cell: (c) => (c.getValue() ? "Yes" : <span className="muted">No (disabled)</span>),
    }),
    col.accessor("createdAtEpochMs", { header: "Created", cell: (c) => <Time epochMs={c.getValue()} /> }),
    col.display({
      id: "last",
      header: "Last delivery",
      cell: (c) => {
        const delivery = lastById.get(c.row.original.id);
        return (
          <span className="nowrap" data-testid="channel-last-delivery">
            {delivery ? <DeliveryStatusBadge delivery={delivery} /> : <span className="muted">none yet</span>}{" "}
            <Link
              href={logHref(c.row.original.id)}
              className="small"
              aria-label={`Delivery log of ${c.row.original.name}`}
            >
              log
            </Link>
          </span>
        );
      },
    }),
    col.display({
      id: "actions",
      header: "Actions",
      cell: (c) => {
        const channel = c.row.original;
        const busy = busyId === channel.id;
        return (
          <span className={styles["row-actions"]}>
            <button type="button" onClick={() => act(channel, "test")} disabled={busy}>
              Send test
            </button>
            <button type="button" onClick={() => act(channel, "toggle")} disabled={busy}>
              {channel.enabled ? "Disable" : "Enable"}
            </button>
            <button type="button" className="danger" onClick={() => onDelete(channel)} disabled={busy}>
              Delete
            </button>
          </span>
        );
      },
    }),
  ];
}

/**
 * The tenant's channels: kind, name, target (a URL's host or the recipients), events, enabled,
 * created, the last delivery's status (a link to its log); actions Send test, Disable/Enable, Delete
 * (asked first).
 */
export function ChannelsTable({
  channels,
  tenant,
  logHref,
}: {
  channels: NotificationChannel[];
  tenant: string;
  /** The page's URL showing one channel's delivery log. */
  logHref: (channelId: string) => string;
}) {
  const trpc = useTRPC();
  const live = useLiveInterval();
  const queryClient = useQueryClient();
  const update = useMutation(trpc.notifications.channels.update.mutationOptions());
  const test = useMutation(trpc.notifications.channels.test.mutationOptions());
  const [busyId, setBusyId] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [deleting, setDeleting] = useState<NotificationChannel | null>(null);

  // The last delivery of each channel (one small read per channel; a tenant has a handful).
  const last = useQueries({
    queries: channels.map((c) => ({
      ...trpc.notifications.deliveries.list.queryOptions({ tenant, channelId: c.id, limit: 1 }),
      refetchInterval: live(10_000),
    })),
  });
  const lastById = new Map(channels.map((c, i) => [c.id, last[i]?.data?.items[0] ?? null]));

  const refresh = () => queryClient.invalidateQueries(trpc.notifications.pathFilter());

  async function act(channel: NotificationChannel, what: "test" | "toggle") {
    if (busyId) return;
    setBusyId(channel.id);
    try {
      if (what === "test") {
        const sent = await test.mutateAsync({ tenant, id: channel.id });
        setOutcome({
          ok: true,
          text: `Test queued for “${channel.name}” (delivery ${sent.deliveryId}); the log below shows when it is delivered.`,
        });
      } else {
        await update.mutateAsync({ tenant, id: channel.id, enabled: !channel.enabled });
        setOutcome({ ok: true, text: `“${channel.name}” is ${channel.enabled ? "disabled" : "enabled"}.` });
      }
      await refresh();
    } catch (error) {
      const verb = what === "test" ? "send a test to" : channel.enabled ? "disable" : "enable";
      setOutcome({ ok: false, error, text: `Could not ${verb} “${channel.name}”.` });
    } finally {
      setBusyId(null);
    }
  }

  const columns = channelColumns({ lastById, logHref, busyId, act, onDelete: setDeleting });
  const rowProps = useMemo(
    () => (row: { original: NotificationChannel }) => ({
      "data-testid": "channel-row",
      "data-channel-id": row.original.id,
      "data-enabled": String(row.original.enabled),
    }),
    [],
  );

  return (
    <>
      {outcome?.ok ? (
        <p className="notice" role="status" data-testid="channel-outcome">
          {outcome.text}
        </p>
      ) : outcome ? (
        <div role="alert" className="error" data-testid="channel-outcome">
          {outcome.text} {outcome.error instanceof Error ? outcome.error.message : String(outcome.error)}
          <RequestIdLine error={outcome.error} />
        </div>
      ) : null}
      <DataTable label="Notification channels" data={channels} columns={columns} rowProps={rowProps} />
      {deleting ? (
        <DeleteDialog
          channel={deleting}
          tenant={tenant}
          onClose={() => setDeleting(null)}
          onDeleted={() => {
            setOutcome({ ok: true, text: `“${deleting.name}” is deleted; its past deliveries stay in the log.` });
            setDeleting(null);
            void refresh();
          }}
        />
      ) : null}
    </>
  );
}
