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
  // Back to the host the browser used (its `Host`): 127.0.0.1 stays 127.0.0.1, so the session cookie
  // set there is sent. `nextUrl` may name `localhost` instead (a sign-in loop without JavaScript), and
  // a proxy's answer must carry an absolute URL.
  const proto =
    request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() || request.nextUrl.protocol.replace(/:$/, "");
  const host = request.headers.get("host") ?? request.nextUrl.host;
  const login = new URL(`/login?next=${encodeURIComponent(path)}`, `${proto}://${host}`);
  return NextResponse.redirect(login, { headers: { "cache-control": "no-store" } });
}

export const config = {
  matcher: ["/((?!login|api/|_next/|favicon\\.ico|icon\\.svg).*)"],
};
