"use client";

/** A page that could not be rendered (e.g. the executor is unreachable while checking the session). */
export default function PageError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <main>
      <h1>Something went wrong</h1>
      <div role="alert" className="error">
        {error.message || "The page could not be shown."}
      </div>
      <button type="button" onClick={reset}>
        Try again
      </button>
    </main>
  );
}
