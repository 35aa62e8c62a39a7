"use client";

import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { classifySearch } from "~/lib/search";
import { resolveSearch, trpcSearchLookups } from "~/lib/search-resolve";
import { useTRPCClient } from "~/trpc/react";
import { useTenantFilter } from "./tenant-filter";

/** The id of the search input (the queue's `/` key focuses it). */
export const SEARCH_INPUT_ID = "global-search";

/**
 * One box for an idempotency key, a trace id, a run id or a business identity value (an order id);
 * Enter jumps to the record, the run, or the records whose identity holds the value (precedence:
 * `resolveSearch`). Without JavaScript (or before hydration) the form GETs `/search`, which does the
 * same on the server.
 */
export function SearchBox() {
  const client = useTRPCClient();
  const router = useRouter();
  const tenant = useTenantFilter();
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const target = classifySearch(String(new FormData(event.currentTarget).get("q") ?? ""));
    setMessage(null);
    setBusy(true);
    try {
      const found = await resolveSearch(target, trpcSearchLookups(client, tenant.input));
      if (found && "path" in found) router.push(tenant.href(found.path));
      else if (found) setMessage(found.message);
    } catch (error) {
      setMessage(`Search failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      setBusy(false);
    }
  }

  return (
    <search>
      <form className="searchbox" method="get" action="/search" onSubmit={submit}>
        {tenant.tenant !== undefined ? <input type="hidden" name="tenant" value={tenant.tenant} /> : null}
        <label htmlFor={SEARCH_INPUT_ID} className="visually-hidden">
          Search
        </label>
        <input
          id={SEARCH_INPUT_ID}
          name="q"
          type="search"
          placeholder="Key, trace id, run id or order id…"
          autoComplete="off"
          spellCheck={false}
          aria-describedby={message ? "search-message" : undefined}
          disabled={busy}
        />
        {message ? (
          <span id="search-message" role="alert" className="search-error">
            {message}
          </span>
        ) : null}
      </form>
    </search>
  );
}
