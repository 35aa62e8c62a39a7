import { TRPCClientError } from "@trpc/client";
import type { NextRequest } from "next/server";
import { classifySearch, intentPath, runPath } from "~/lib/search";
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
 * `GET /search?q=…[&tenant=…]`: the search box's target without JavaScript (and before hydration).
 * A run id opens the run; a 32-hex value opens the record with that key, else the first record with
 * that trace id, else the record page (which says that no record has it); anything else goes back to
 * the runs page. The session cookie is required (the proxy sends others to the login page).
 */
export async function GET(request: NextRequest): Promise<Response> {
  const target = classifySearch(request.nextUrl.searchParams.get("q") ?? "");
  const tenant = parseTenantParam(request.nextUrl.searchParams.get(TENANT_PARAM));
  const go = (path: string) => seeOther(withTenant(path, tenant));
  switch (target.kind) {
    case "empty":
    case "invalid":
      return go("/runs");
    case "run":
      return go(runPath(target.runId));
    case "hex32": {
      const sessionId = request.cookies.get(SESSION_COOKIE)?.value;
      if (!sessionId) return seeOther(`/login?next=${encodeURIComponent(intentPath(target.value))}`);
      const client = executorClient({ sessionId }, forwardedFor(request.headers));
      try {
        await client.intents.get.query({ key: target.value });
        return go(intentPath(target.value));
      } catch (error) {
        if (!(error instanceof TRPCClientError) || error.data?.httpStatus !== 404) return go(intentPath(target.value));
      }
      try {
        const byTrace = await client.intents.list.query({
          filters: { traceId: target.value },
          limit: 1,
          ...(tenant ? { tenant } : {}),
        });
        const first = byTrace.items[0];
        return go(intentPath(first ? first.key : target.value));
      } catch {
        return go(intentPath(target.value));
      }
    }
  }
}
