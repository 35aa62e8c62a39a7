"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useLiveInterval } from "~/components/live-refresh";
import { ActionDialog } from "~/components/queue/action-dialog";
import { ErrorState, Loading } from "~/components/states";
import { actionLabel, actionUnavailable, OPERATOR_ACTIONS, toolCompensation } from "~/lib/status";
import { useTRPC } from "~/trpc/react";
import type { OperatorAction, QueueItem } from "~/trpc/types";

/**
 * The human queue's actions on the record page, for a record waiting for a person: the same buttons
 * and the same confirmation dialog as the queue (compare-and-set on the record's version, a reason
 * each time). The record's queue entry (what may be done: resend allowed, key expired…) comes from
 * `queue.list` for its tool and tenant.
 */
export function RecordActions({
  recordKey,
  tool,
  tenant,
  needsHuman,
  onDone,
}: {
  recordKey: string;
  tool: string;
  /** The admin's tenant filter for the read (undefined: every tenant, or a non-admin's own). */
  tenant: string | undefined;
  /** The record as last read waits for a person (the actions show only then). */
  needsHuman: boolean;
  onDone: (message: string) => void;
}) {
  const live = useLiveInterval();
  const trpc = useTRPC();
  // The dialog keeps the entry it opened with: after a refused (stale) action the refetched record
  // and queue no longer hold it waiting, and the dialog must stay to say who resolved it first.
  const [pending, setPending] = useState<{ action: OperatorAction; item: QueueItem } | null>(null);
  const queue = useQuery({
    ...trpc.queue.list.queryOptions({ tool, limit: 500, ...(tenant ? { tenant } : {}) }),
    refetchInterval: live(10_000),
    enabled: needsHuman || pending !== null,
  });
  const tools = useQuery({ ...trpc.tools.list.queryOptions(), staleTime: 60_000 });
  const item = needsHuman ? queue.data?.items.find((i) => i.key === recordKey) : undefined;
  const unavailable = (action: OperatorAction) =>
    item ? actionUnavailable(action, { ...item, ...toolCompensation(tools.data, item.tool) }) : null;

  if (!needsHuman && !pending) return null;
  if (queue.isPending && !pending) return <Loading what="the queue's actions" />;
  if (queue.error && !queue.data && !pending)
    return <ErrorState error={queue.error} title="Could not load the queue's actions" />;
  const dialog = pending ? (
    <ActionDialog
      key={`${pending.item.key}-${pending.action}`}
      item={pending.item}
      action={pending.action}
      onClose={() => setPending(null)}
      onDone={(message) => {
        setPending(null);
        onDone(message);
      }}
    />
  ) : null;
  if (!item)
    return (
      <>
        {null}
        {dialog}
      </>
    );
  return (
    <>
      <section className="panel" aria-label="Queue actions">
        <h2>Waiting for a person</h2>
        <p className="small muted">The same actions as the human queue; each asks for a reason and is audited.</p>
        <div className="actions">
          {OPERATOR_ACTIONS.map((action) => (
            <button
              key={action}
              type="button"
              className={action === "compensate" ? "danger" : undefined}
              onClick={() => setPending({ action, item })}
              disabled={unavailable(action) !== null}
              title={unavailable(action) ?? undefined}
            >
              {actionLabel(action)}
            </button>
          ))}
        </div>
        {item.keyExpired ? (
          <p className="warning small">Older than the tool's key retention: a resend may not be deduplicated.</p>
        ) : null}
      </section>
      {dialog}
    </>
  );
}
