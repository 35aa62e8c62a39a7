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
  const url = request.nextUrl.clone();
  url.pathname = "/login";
  url.search = `?next=${encodeURIComponent(path)}`;
  return NextResponse.redirect(url);
}

export const config = {
  matcher: ["/((?!login|api/|_next/|favicon\\.ico|icon\\.svg).*)"],
};
