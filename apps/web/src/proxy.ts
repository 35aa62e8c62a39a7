import { type NextRequest, NextResponse } from "next/server";
import { PATH_HEADER, SESSION_COOKIE } from "~/server/session-cookie";

/** Sends logged-out users to `/login?next=<path>`; pages re-check the key with the executor. */
export function proxy(request: NextRequest): NextResponse {
  const path = `${request.nextUrl.pathname}${request.nextUrl.search}`;
  if (request.cookies.get(SESSION_COOKIE)?.value) {
    const headers = new Headers(request.headers);
    headers.set(PATH_HEADER, path);
    return NextResponse.next({ request: { headers } });
  }
  // A relative Location: the browser stays on the host it used (127.0.0.1 stays 127.0.0.1, so the
  // session cookie set there is sent); an absolute one from `nextUrl` may name `localhost` instead.
  return new NextResponse(null, {
    status: 307,
    headers: { location: `/login?next=${encodeURIComponent(path)}`, "cache-control": "no-store" },
  });
}

export const config = {
  matcher: ["/((?!login|api/|_next/|favicon\\.ico|icon\\.svg).*)"],
};
