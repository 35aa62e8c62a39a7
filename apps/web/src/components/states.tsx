import type { ReactNode } from "react";

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

/** A failed load or action, announced. */
export function ErrorState({ error, title = "Could not load this" }: { error: unknown; title?: string }) {
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div role="alert" className="error">
      <strong>{title}.</strong> {message}
    </div>
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
