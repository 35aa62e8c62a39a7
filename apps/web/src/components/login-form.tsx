"use client";

import { type FormEvent, useState } from "react";

/** Posts the key to `/api/session` (which keeps it in an httpOnly cookie), then opens `next`. */
export function LoginForm({ next }: { next: string }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

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
      <label className="field" htmlFor="api-key">
        <span>API key</span>
      </label>
      <input id="api-key" name="apiKey" type="text" className="secret" autoComplete="off" required spellCheck={false} />
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
