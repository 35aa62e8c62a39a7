"use client";

import { useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { useLiveInterval } from "~/components/live-refresh";
import { useSession } from "~/components/session-context";
import { EmptyState, ErrorState, Loading } from "~/components/states";
import { useTenantFilter } from "~/components/tenant-filter";
import { DELIVERY_STATUSES, type DeliveryStatus, type NotificationChannel } from "~/lib/notifications";
import { useTRPC } from "~/trpc/react";
import { ChannelForm, SecretOnce } from "./channel-form";
import { ChannelsTable } from "./channels-table";
import { DeliveryLog } from "./delivery-log";

/** `/notifications?…` with the log's filters (the tenant filter is added by the caller). */
function notificationsPath(filter: { channel?: string | undefined; status?: DeliveryStatus | undefined }): string {
  const params = new URLSearchParams();
  if (filter.channel) params.set("channel", filter.channel);
  if (filter.status) params.set("status", filter.status);
  return `/notifications${params.size ? `?${params}` : ""}#delivery-log`;
}

/**
 * Notifications (admins; issue 23 §3), per tenant — the header's tenant, or the key's own when it shows
 * all tenants: the channels (with Send test, Disable/Enable, Delete), the new-channel form (a webhook's
 * secret shown once), and the delivery log. Other roles see that only admins configure notifications.
 */
export function NotificationsView({ params }: { params: Record<string, string> }) {
  const session = useSession();
  if (session.role !== "admin") {
    return (
      <>
        <h1>Notifications</h1>
        <EmptyState>Only admins configure notifications. Ask an admin to add a channel for your tenant.</EmptyState>
      </>
    );
  }
  return <AdminNotifications params={params} />;
}

function AdminNotifications({ params }: { params: Record<string, string> }) {
  const session = useSession();
  const filter = useTenantFilter();
  const trpc = useTRPC();
  const live = useLiveInterval();
  const router = useRouter();
  const tenant = filter.tenant ?? session.tenant;
  const [secret, setSecret] = useState<{ channel: NotificationChannel; secret: string } | null>(null);
  const channels = useQuery({
    ...trpc.notifications.channels.list.queryOptions({ tenant }),
    refetchInterval: live(30_000),
  });
  const status = DELIVERY_STATUSES.includes(params.status as DeliveryStatus)
    ? (params.status as DeliveryStatus)
    : undefined;
  const channelId = params.channel || undefined;
  const list = channels.data?.channels ?? [];

  return (
    <>
      <h1>Notifications</h1>
      <p className="muted small">
        Channels of tenant <strong data-testid="notifications-tenant">{tenant}</strong>
        {filter.tenant === undefined ? " (your key's; choose another with the header's Tenant)" : ""}. Each receives the
        events ticked for it: a record waiting for a person, a failed compensation, evidence contradicting a settled
        record, a tool's UNKNOWN share over its threshold, stale PENDING records. A burst is grouped into a few
        deliveries.
      </p>
      {secret ? (
        <SecretOnce
          key={secret.channel.id}
          channel={secret.channel}
          secret={secret.secret}
          onDone={() => setSecret(null)}
        />
      ) : null}
      <section aria-label="Channels">
        <h2>Channels</h2>
        {channels.error ? <ErrorState error={channels.error} title="Could not load the channels" /> : null}
        {channels.isPending ? <Loading what="channels" /> : null}
        {channels.data && list.length === 0 ? (
          <EmptyState>No channel yet: nobody is told when a record waits for a person. Add one below.</EmptyState>
        ) : null}
        {list.length ? (
          <ChannelsTable
            channels={list}
            tenant={tenant}
            logHref={(id) => filter.href(notificationsPath({ channel: id, status }))}
          />
        ) : null}
      </section>
      <ChannelForm
        key={tenant}
        tenant={tenant}
        onCreated={(created) => setSecret(created.secret ? { channel: created.channel, secret: created.secret } : null)}
      />
      <div id="delivery-log">
        <DeliveryLog
          key={tenant}
          tenant={tenant}
          channels={list}
          channelId={channelId}
          status={status}
          onFilter={(next) => router.push(filter.href(notificationsPath(next)), { scroll: false })}
        />
      </div>
    </>
  );
}
