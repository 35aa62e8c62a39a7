"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useLiveInterval } from "~/components/live-refresh";
import { ActionDialog } from "~/components/queue/action-dialog";
import { ErrorState, Loading } from "~/components/states";
import { actionLabel, actionUnavailable, OPERATOR_ACTIONS, toolCompensation } from "~/lib/status";
import { useTRPC } from "~/trpc/react";
import type { OperatorAction } from "~/trpc/types";

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
  onDone,
}: {
  recordKey: string;
  tool: string;
  /** The admin's tenant filter for the read (undefined: every tenant, or a non-admin's own). */
  tenant: string | undefined;
  onDone: (message: string) => void;
}) {
  const live = useLiveInterval();
  const trpc = useTRPC();
  const queue = useQuery({
    ...trpc.queue.list.queryOptions({ tool, limit: 500, ...(tenant ? { tenant } : {}) }),
    refetchInterval: live(10_000),
  });
  const [pending, setPending] = useState<OperatorAction | null>(null);
  const tools = useQuery({ ...trpc.tools.list.queryOptions(), staleTime: 60_000 });
  const item = queue.data?.items.find((i) => i.key === recordKey);
  const unavailable = (action: OperatorAction) =>
    item ? actionUnavailable(action, { ...item, ...toolCompensation(tools.data, item.tool) }) : null;

  if (queue.isPending) return <Loading what="the queue's actions" />;
  if (queue.error && !queue.data) return <ErrorState error={queue.error} title="Could not load the queue's actions" />;
  if (!item) return null;
  return (
    <section className="panel" aria-label="Queue actions">
      <h2>Waiting for a person</h2>
      <p className="small muted">The same actions as the human queue; each asks for a reason and is audited.</p>
      <div className="actions">
        {OPERATOR_ACTIONS.map((action) => (
          <button
            key={action}
            type="button"
            className={action === "compensate" ? "danger" : undefined}
            onClick={() => setPending(action)}
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
      {pending ? (
        <ActionDialog
          key={`${item.key}-${pending}`}
          item={item}
          action={pending}
          onClose={() => setPending(null)}
          onDone={(message) => {
            setPending(null);
            onDone(message);
          }}
        />
      ) : null}
    </section>
  );
}
