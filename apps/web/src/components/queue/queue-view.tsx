"use client";

import { useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useLiveInterval } from "~/components/live-refresh";
import { SEARCH_INPUT_ID } from "~/components/search-box";
import { useCanOperate } from "~/components/session-context";
import { EmptyState, ErrorState, Loading } from "~/components/states";
import { StatusBadge } from "~/components/status-badge";
import { TenantLink, useTenantFilter } from "~/components/tenant-filter";
import { formatDuration } from "~/lib/format";
import { intentPath } from "~/lib/search";
import { actionLabel, actionUnavailable, OPERATOR_ACTIONS, toolCompensation } from "~/lib/status";
import { useTRPC } from "~/trpc/react";
import type { OperatorAction, QueueItem } from "~/trpc/types";
import { ActionDialog } from "./action-dialog";
import { BULK_ACTIONS, BulkDialog } from "./bulk-dialog";
import { HelpDialog } from "./help-dialog";

/** The queue refreshes every 5 s (paused in background tabs). */
const QUEUE_REFETCH_MS = 5_000;

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return Boolean(el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName)));
}

/** The human queue of the tenant chosen in the header (a fresh view, nothing "new", when it changes). */
export function QueueView() {
  const { tenant } = useTenantFilter();
  return <TenantQueue key={tenant ?? ""} />;
}

/**
 * The human queue, oldest first. New items are announced and shown on request (never reflowed under
 * the cursor); resolved items leave. Keys: j/k move, 1–4 act, / search, ? help.
 */
function TenantQueue() {
  const live = useLiveInterval();
  const trpc = useTRPC();
  const tenant = useTenantFilter();
  const canOperate = useCanOperate();
  const queue = useQuery({
    ...trpc.queue.list.queryOptions({ limit: 500, ...tenant.input }),
    refetchInterval: live(QUEUE_REFETCH_MS),
  });
  const tools = useQuery({ ...trpc.tools.list.queryOptions(), staleTime: 60_000, enabled: canOperate });
  const unavailable = useCallback(
    (action: OperatorAction, item: QueueItem) =>
      actionUnavailable(action, { ...item, ...toolCompensation(tools.data, item.tool) }),
    [tools.data],
  );
  const [shownKeys, setShownKeys] = useState<Set<string> | null>(null);
  const [selectedKey, setSelectedKey] = useState<string | null>(null);
  const [pending, setPending] = useState<{ item: QueueItem; action: OperatorAction } | null>(null);
  const [helpOpen, setHelpOpen] = useState(false);
  const [checked, setChecked] = useState<Set<string>>(() => new Set());
  const [bulk, setBulk] = useState<OperatorAction | null>(null);
  const [announcement, setAnnouncement] = useState("");
  const rowRefs = useRef(new Map<string, HTMLTableRowElement>());

  const all = queue.data?.items;
  useEffect(() => {
    if (all && shownKeys === null) setShownKeys(new Set(all.map((i) => i.key)));
  }, [all, shownKeys]);

  const visible = useMemo(() => (all && shownKeys ? all.filter((i) => shownKeys.has(i.key)) : []), [all, shownKeys]);
  const newCount = all && shownKeys ? all.filter((i) => !shownKeys.has(i.key)).length : 0;
  const selected = visible.find((i) => i.key === selectedKey) ?? visible[0] ?? null;
  const checkedItems = visible.filter((i) => checked.has(i.key));
  const toggle = (key: string, on: boolean) =>
    setChecked((was) => {
      const next = new Set(was);
      if (on) next.add(key);
      else next.delete(key);
      return next;
    });

  const showNew = useCallback(() => {
    if (all) setShownKeys(new Set(all.map((i) => i.key)));
  }, [all]);

  const move = useCallback(
    (delta: number) => {
      if (!visible.length) return;
      const index = selected ? visible.indexOf(selected) : -1;
      const next = visible[Math.min(visible.length - 1, Math.max(0, index + delta))]!;
      setSelectedKey(next.key);
      rowRefs.current.get(next.key)?.scrollIntoView({ block: "nearest" });
    },
    [visible, selected],
  );

  const open = useCallback(
    (action: OperatorAction) => {
      if (selected && canOperate && unavailable(action, selected) === null) setPending({ item: selected, action });
    },
    [selected, canOperate, unavailable],
  );

  useEffect(() => {
    function onKey(event: KeyboardEvent) {
      if (pending || bulk || event.metaKey || event.ctrlKey || event.altKey || isTyping(event.target)) return;
      if (helpOpen) return;
      if (event.key === "j") move(1);
      else if (event.key === "k") move(-1);
      else if (event.key === "/") {
        event.preventDefault();
        document.getElementById(SEARCH_INPUT_ID)?.focus();
      } else if (event.key === "?") setHelpOpen(true);
      else if (/^[1-4]$/.test(event.key)) open(OPERATOR_ACTIONS[Number(event.key) - 1]!);
      else return;
      event.preventDefault();
    }
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [move, open, pending, bulk, helpOpen]);

  return (
    <>
      <h1>Human queue</h1>
      <p className="muted small">
        Records the executor could not settle, oldest first. Keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>1</kbd>–
        <kbd>4</kbd> act, <kbd>/</kbd> search, <kbd>?</kbd> help.{" "}
        <button type="button" onClick={() => setHelpOpen(true)}>
          Keyboard help
        </button>
      </p>
      <div aria-live="polite" aria-atomic="true">
        {newCount > 0 ? (
          <div className="notice">
            <span>
              {newCount} new {newCount === 1 ? "item" : "items"}
            </span>
            <button type="button" onClick={showNew}>
              Show them
            </button>
          </div>
        ) : null}
      </div>
      <div aria-live="polite" className="visually-hidden">
        {announcement}
      </div>
      {announcement ? <p className="notice">{announcement}</p> : null}
      {queue.error ? <ErrorState error={queue.error} title="Could not load the queue" /> : null}
      {queue.isPending ? <Loading what="the queue" /> : null}
      {all && shownKeys && visible.length === 0 && newCount === 0 ? (
        <EmptyState>
          No record is waiting for a person now. A record comes here when the executor cannot settle an UNKNOWN by
          itself; what people decided is in the <TenantLink href="/audit">audit log</TenantLink>.
        </EmptyState>
      ) : null}
      {visible.length > 0 ? (
        <>
          {canOperate && selected && !pending ? (
            <section className="panel" aria-label="Selected record">
              <div>
                Selected: <strong>{selected.effect}</strong> <span className="mono small">{selected.key}</span>
              </div>
              <div className="actions">
                {OPERATOR_ACTIONS.map((action, index) => (
                  <button
                    key={action}
                    type="button"
                    className={action === "compensate" ? "danger" : undefined}
                    onClick={() => setPending({ item: selected, action })}
                    disabled={unavailable(action, selected) !== null}
                    title={unavailable(action, selected) ?? undefined}
                    aria-keyshortcuts={String(index + 1)}
                  >
                    {actionLabel(action)}
                  </button>
                ))}
              </div>
              <p className="small muted">
                Keys <kbd>1</kbd> to <kbd>4</kbd> in this order.
              </p>
              {selected.keyExpired ? (
                <p className="warning small">Older than the tool's key retention: a resend may not be deduplicated.</p>
              ) : null}
            </section>
          ) : null}
          {canOperate ? (
            <div className="selection-bar">
              <span aria-live="polite">
                {checkedItems.length} of {visible.length} checked
              </span>
              {BULK_ACTIONS.map((action) => (
                <button key={action} type="button" disabled={checkedItems.length === 0} onClick={() => setBulk(action)}>
                  {action === "confirm_effect"
                    ? "Settle the checked: it happened"
                    : "Settle the checked: it did not happen"}
                </button>
              ))}
            </div>
          ) : null}
          <div className="table-wrap table-fit">
            <table aria-label="Human queue">
              <thead>
                <tr>
                  {canOperate ? (
                    <th scope="col">
                      <input
                        type="checkbox"
                        aria-label="Check all"
                        checked={checkedItems.length > 0 && checkedItems.length === visible.length}
                        onChange={(e) => setChecked(e.target.checked ? new Set(visible.map((i) => i.key)) : new Set())}
                      />
                    </th>
                  ) : null}
                  {tenant.showTenant ? <th scope="col">Tenant</th> : null}
                  <th scope="col">Effect</th>
                  <th scope="col">Tool</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="num">
                    Age
                  </th>
                  <th scope="col">Run / step</th>
                  <th scope="col">Why</th>
                  <th scope="col">Record</th>
                </tr>
              </thead>
              <tbody>
                {visible.map((item) => (
                  <tr
                    key={item.key}
                    ref={(el) => {
                      if (el) rowRefs.current.set(item.key, el);
                      else rowRefs.current.delete(item.key);
                    }}
                    data-testid="queue-row"
                    data-key={item.key}
                    className={item.key === selected?.key ? "selected" : undefined}
                    onClick={() => setSelectedKey(item.key)}
                  >
                    {canOperate ? (
                      <td>
                        <input
                          type="checkbox"
                          aria-label={`Check ${item.effect} (${item.key.slice(0, 12)})`}
                          checked={checked.has(item.key)}
                          onChange={(e) => toggle(item.key, e.target.checked)}
                          onClick={(e) => e.stopPropagation()}
                        />
                      </td>
                    ) : null}
                    {tenant.showTenant ? <td data-testid="tenant">{item.tenant}</td> : null}
                    <td className="wrap-anywhere">
                      {item.effect}
                      {item.key === selected?.key ? <span className="visually-hidden"> (selected)</span> : null}
                    </td>
                    <td>
                      <span className="clip" title={item.tool}>
                        {item.tool}
                      </span>
                    </td>
                    <td>
                      <StatusBadge status={item.status} />
                    </td>
                    <td className="num nowrap">{formatDuration(item.ageMs)}</td>
                    <td className="small">
                      <span className="clip" title={`${item.runId} / ${item.stepId}`}>
                        {item.runId} / {item.stepId}
                      </span>
                    </td>
                    <td className="small">
                      {item.error ? (
                        <span className="clamp" title={`${item.error.code}: ${item.error.message}`}>
                          {item.error.code}: {item.error.message}
                        </span>
                      ) : (
                        "–"
                      )}
                    </td>
                    <td>
                      <TenantLink href={intentPath(item.key)} className="mono small">
                        {item.key.slice(0, 12)}…
                      </TenantLink>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
      {pending ? (
        <ActionDialog
          key={`${pending.item.key}-${pending.action}`}
          item={pending.item}
          action={pending.action}
          onClose={() => setPending(null)}
          onDone={(message) => {
            setPending(null);
            setAnnouncement(message);
          }}
        />
      ) : null}
      {bulk ? (
        <BulkDialog
          items={checkedItems}
          action={bulk}
          onClose={(acted) => {
            setBulk(null);
            if (acted) setChecked(new Set());
          }}
          onDone={(message) => {
            setBulk(null);
            setChecked(new Set());
            setAnnouncement(message);
          }}
        />
      ) : null}
      {helpOpen ? <HelpDialog onClose={() => setHelpOpen(false)} /> : null}
    </>
  );
}
