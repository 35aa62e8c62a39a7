"use client";

import { useRouter } from "next/navigation";
import type { FormEvent } from "react";
import { useTenantFilter } from "~/components/tenant-filter";
import { runPath } from "~/lib/search";

/** Opens a run by its id (without JavaScript, through `/search`). */
export function RunSearch() {
  const router = useRouter();
  const tenant = useTenantFilter();
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const runId = String(new FormData(event.currentTarget).get("q") ?? "").trim();
    if (runId) router.push(tenant.href(runPath(runId)));
  }
  return (
    <form className="toolbar" method="get" action="/search" onSubmit={submit}>
      {tenant.tenant !== undefined ? <input type="hidden" name="tenant" value={tenant.tenant} /> : null}
      <label className="field">
        <span>Run id</span>
        <input name="q" required autoComplete="off" spellCheck={false} />
      </label>
      <button type="submit">Open run</button>
    </form>
  );
}
