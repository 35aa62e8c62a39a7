import type { NextRequest } from "next/server";
import { env } from "~/env";
import { REQUEST_ID_HEADER } from "~/lib/request-id";
import { fetchExecutor } from "~/server/executor-health";
import { FORWARDED_FOR, forwardedFor } from "~/server/forwarded-for";
import { fromOwnPages } from "~/server/request-guard";
import { requestIdFor } from "~/server/request-id";
import { SESSION_COOKIE } from "~/server/session-cookie";

/** Procedure paths as tRPC sends them (`a.b`, or `a.b,c.d` when batched). */
const PROCEDURE_PATH = /^[A-Za-z0-9_.,]{1,500}$/;

type RouteContext = { params: Promise<{ trpc: string }> };

/**
 * Forwards `/api/trpc/<procedure>` to `${EXECUTOR_URL}/trpc/<procedure>` with the cookie's session id
 * as `Authorization: Session <id>` and the browser's address chain as `X-Forwarded-For`: the executor checks the session (expiry, idle timeout, key not
 * revoked) and the role on every call. POSTs not from the dashboard's own pages are refused.
 * The request id (`X-Request-Id`: the browser's when valid, else a new one) goes to the executor and
 * comes back on the answer; the proxy's own 502/504 carry it as `error.data.requestId` too.
 */
async function forward(request: NextRequest, context: RouteContext): Promise<Response> {
  const { trpc } = await context.params;
  if (!PROCEDURE_PATH.test(trpc)) return Response.json({ error: { message: "bad procedure path" } }, { status: 400 });
  if (request.method === "POST" && !fromOwnPages(request)) {
    return Response.json({ error: { message: "cross-origin request refused" } }, { status: 403 });
  }
  const requestId = requestIdFor(request.headers);
  const headers = new Headers({ "content-type": "application/json", [REQUEST_ID_HEADER]: requestId });
  const sessionId = request.cookies.get(SESSION_COOKIE)?.value;
  if (sessionId) headers.set("authorization", `Session ${sessionId}`);
  const chain = forwardedFor(request.headers);
  if (chain) headers.set(FORWARDED_FOR, chain);
  const traceparent = request.headers.get("traceparent");
  if (traceparent) headers.set("traceparent", traceparent);
  const target = new URL(`/trpc/${trpc}${request.nextUrl.search}`, env.EXECUTOR_URL);
  let upstream: Response;
  try {
    upstream = await fetchExecutor(target, {
      method: request.method,
      headers,
      cache: "no-store",
      ...(request.method === "POST" ? { body: await request.text() } : {}),
    });
  } catch (error) {
    const timedOut = error instanceof Error && error.name === "TimeoutError";
    const status = timedOut ? 504 : 502;
    const message = timedOut ? "the executor did not answer in time" : "the executor could not be reached";
    return Response.json(
      { error: { message, code: -32603, data: { httpStatus: status, requestId } } },
      { status, headers: { [REQUEST_ID_HEADER]: requestId } },
    );
  }
  return new Response(await upstream.text(), {
    status: upstream.status,
    headers: {
      "content-type": upstream.headers.get("content-type") ?? "application/json",
      "cache-control": "no-store",
      [REQUEST_ID_HEADER]: upstream.headers.get(REQUEST_ID_HEADER) ?? requestId,
    },
  });
}

export const GET = forward;
export const POST = forward;
