import { type NextRequest, NextResponse } from "next/server";
import { contentSecurityPolicy, NONCE_HEADER, newNonce } from "~/csp";
import { PATH_HEADER, SESSION_COOKIE } from "~/server/session-cookie";

const CSP = "content-security-policy";

/**
 * Every page: a fresh CSP nonce (on the request, for Next.js's scripts, and on the answer; `csp.ts`).
 * Sends logged-out users to `/login?next=<path>`; pages re-check the key with the executor.
 */
export function proxy(request: NextRequest): NextResponse {
  const nonce = newNonce();
  const policy = contentSecurityPolicy(nonce, process.env.NODE_ENV === "development");
  const path = `${request.nextUrl.pathname}${request.nextUrl.search}`;
  const signedIn = Boolean(request.cookies.get(SESSION_COOKIE)?.value);
  if (signedIn || request.nextUrl.pathname === "/login") {
    const headers = new Headers(request.headers);
    headers.set(NONCE_HEADER, nonce);
    headers.set(CSP, policy);
    if (signedIn) headers.set(PATH_HEADER, path);
    const response = NextResponse.next({ request: { headers } });
    response.headers.set(CSP, policy);
    return response;
  }
  // Back to the host the browser used (its `Host`): 127.0.0.1 stays 127.0.0.1, so the session cookie
  // set there is sent. `nextUrl` may name `localhost` instead (a sign-in loop without JavaScript), and
  // a proxy's answer must carry an absolute URL.
  const proto =
    request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() || request.nextUrl.protocol.replace(/:$/, "");
  const host = request.headers.get("host") ?? request.nextUrl.host;
  const login = new URL(`/login?next=${encodeURIComponent(path)}`, `${proto}://${host}`);
  return NextResponse.redirect(login, { headers: { "cache-control": "no-store", [CSP]: policy } });
}

export const config = {
  matcher: ["/((?!api/|_next/|favicon\\.ico|icon\\.svg).*)"],
};
