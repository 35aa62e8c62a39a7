import type { ReactNode } from "react";
import { requestIdOf } from "~/lib/request-id";

/** Nothing exists yet (as opposed to a filter that matched nothing). */
export function EmptyState({ children }: { children: ReactNode }) {
  return (
    <div className="empty">
      <strong>Nothing here</strong>
      <p className="muted">{children}</p>
    </div>
  );
}

/** A filter or search that matched nothing. */
export function NoResults({ children }: { children: ReactNode }) {
  return (
    <div className="empty">
      <strong>No results</strong>
      <p className="muted">{children}</p>
    </div>
  );
}

/**
 * A failed load or action, announced, with the executor's request id when the error carries one
 * (selectable: an operator quotes it; the executor's log line and trace for the call have it).
 */
export function ErrorState({ error, title = "Could not load this" }: { error: unknown; title?: string }) {
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div role="alert" className="error">
      <strong>{title}.</strong> {message}
      <RequestIdLine error={error} />
    </div>
  );
}

/**
 * "Request id: <id>" of an API error (`data.requestId`), the id selected whole on a click; nothing
 * when the error carries none.
 */
export function RequestIdLine({ error }: { error: unknown }) {
  const requestId = requestIdOf(error);
  if (!requestId) return null;
  return (
    <p className="muted" data-testid="request-id">
      Request id: <code style={{ userSelect: "all" }}>{requestId}</code>
    </p>
  );
}

/** Waiting for the first answer. */
export function Loading({ what = "data" }: { what?: string }) {
  return (
    <p className="loading" aria-busy="true">
      Loading {what}…
    </p>
  );
}
