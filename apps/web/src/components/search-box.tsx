"use client";

import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { classifySearch, intentPath, runPath } from "~/lib/search";
import { httpStatusOf, useTRPCClient } from "~/trpc/react";
import { useTenantFilter } from "./tenant-filter";

/** The id of the search input (the queue's `/` key focuses it). */
export const SEARCH_INPUT_ID = "global-search";

/**
 * One box for an idempotency key, a trace id or a run id; Enter jumps to the record or run. Without
 * JavaScript (or before hydration) the form GETs `/search`, which does the same on the server.
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
    switch (target.kind) {
      case "empty":
        return;
      case "invalid":
        setMessage(target.reason);
        return;
      case "run":
        router.push(tenant.href(runPath(target.runId)));
        return;
      case "hex32": {
        setBusy(true);
        try {
          const found = await client.intents.get.query({ key: target.value }).then(
            () => true,
            (error: unknown) => {
              if (httpStatusOf(error) === 404) return false;
              throw error;
            },
          );
          if (found) {
            router.push(tenant.href(intentPath(target.value)));
            return;
          }
          const byTrace = await client.intents.list.query({
            filters: { traceId: target.value },
            limit: 1,
            ...tenant.input,
          });
          const first = byTrace.items[0];
          if (first) router.push(tenant.href(intentPath(first.key)));
          else setMessage(`No record has the key or trace id ${target.value}.`);
        } catch (error) {
          setMessage(`Search failed: ${error instanceof Error ? error.message : String(error)}`);
        } finally {
          setBusy(false);
        }
      }
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
          placeholder="Key, trace id or run id"
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
