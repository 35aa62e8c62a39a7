import type { NextRequest } from "next/server";
import { classifySearch, identityPath } from "~/lib/search";
import { resolveSearch, trpcSearchLookups } from "~/lib/search-resolve";
import { parseTenantParam, TENANT_PARAM, withTenant } from "~/lib/tenant-filter";
import { executorClient } from "~/server/executor-client";
import { forwardedFor } from "~/server/forwarded-for";
import { SESSION_COOKIE } from "~/server/session-cookie";

export const dynamic = "force-dynamic";

/** A 303 with a relative `Location` (the browser stays on the host it used). */
function seeOther(path: string): Response {
  return new Response(null, { status: 303, headers: { location: path, "cache-control": "no-store" } });
}

/**
 * `GET /search?q=…[&tenant=…]`: the search box's target without JavaScript (and before hydration),
 * by the box's precedence (`resolveSearch`): the record with that key, else the first record with
 * that trace id; a run that exists when no record's identity holds the value; else the records whose
 * business identity holds it (`/identity?value=…`). An empty or unsearchable text goes back to the
 * runs page; when the executor fails, the identity page (which says so). The session cookie is
 * required (the proxy sends others to the login page).
 */
export async function GET(request: NextRequest): Promise<Response> {
  const q = request.nextUrl.searchParams.get("q") ?? "";
  const target = classifySearch(q);
  const tenant = parseTenantParam(request.nextUrl.searchParams.get(TENANT_PARAM));
  const go = (path: string) => seeOther(withTenant(path, tenant));
  if (target.kind === "empty" || target.kind === "invalid") return go("/runs");
  const sessionId = request.cookies.get(SESSION_COOKIE)?.value;
  if (!sessionId) return seeOther(`/login?next=${encodeURIComponent(`/search?q=${encodeURIComponent(q)}`)}`);
  const client = executorClient({ sessionId }, forwardedFor(request.headers));
  try {
    const found = await resolveSearch(target, trpcSearchLookups(client, tenant ? { tenant } : {}));
    return go(found && "path" in found ? found.path : "/runs");
  } catch {
    return go(identityPath(target.value));
  }
}
