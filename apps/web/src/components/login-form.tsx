"use client";

import { type FormEvent, useState } from "react";

/**
 * Posts the key to `/api/session` (which opens a session at the executor and keeps only its id in an
 * httpOnly cookie), then opens `next` (a path of this dashboard, checked by the login page). Without
 * JavaScript the form posts the same, with `next`, and the answer redirects there. The key is hidden as
 * it is typed (a password field, never autocompleted) unless "Show key" is pressed.
 */
export function LoginForm({ next, failed = null }: { next: string; failed?: string | null }) {
  const [error, setError] = useState<string | null>(failed);
  const [busy, setBusy] = useState(false);
  const [shown, setShown] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const apiKey = String(new FormData(event.currentTarget).get("apiKey") ?? "").trim();
    if (!apiKey) {
      setError("Enter an API key.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const res = await fetch("/api/session", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ apiKey }),
      });
      if (res.ok) {
        window.location.assign(next);
        return;
      }
      const body = (await res.json().catch(() => null)) as { error?: string } | null;
      setError(body?.error ?? `Sign-in failed (${res.status}).`);
    } catch {
      setError("The dashboard could not be reached.");
    } finally {
      setBusy(false);
    }
  }

  return (
    <form method="post" action="/api/session" onSubmit={submit}>
      <input type="hidden" name="next" value={next} />
      <label className="field" htmlFor="api-key">
        <span>API key</span>
      </label>
      <span className="secret-field">
        <input
          id="api-key"
          name="apiKey"
          type={shown ? "text" : "password"}
          autoComplete="off"
          autoCapitalize="off"
          required
          spellCheck={false}
        />
        <button type="button" aria-pressed={shown} aria-controls="api-key" onClick={() => setShown(!shown)}>
          {shown ? "Hide key" : "Show key"}
        </button>
      </span>
      {error ? (
        <p role="alert" className="error">
          {error}
        </p>
      ) : null}
      <button type="submit" className="primary" disabled={busy}>
        Sign in
      </button>
    </form>
  );
}
