import { type NextRequest, NextResponse } from "next/server";
import { z } from "zod";
import { forwardedFor } from "~/server/forwarded-for";
import { fromOwnPages, safeNext } from "~/server/request-guard";
import { endSession, openSession } from "~/server/session";
import { SESSION_COOKIE } from "~/server/session-cookie";

const loginBody = z.object({
  apiKey: z
    .string()
    .trim()
    .min(1, "Enter an API key.")
    .max(500, "That is too long for an API key.")
    .regex(/^[\x21-\x7e]+$/, "That is not an API key: keys are printable ASCII without spaces."),
});

/** Whether this request reached the dashboard over https (itself, or a TLS proxy saying so). */
function overHttps(request: NextRequest): boolean {
  const forwarded = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim();
  return (forwarded ?? request.nextUrl.protocol.replace(/:$/, "")) === "https";
}

/**
 * Sets the session cookie: the opaque session id only (never the key), httpOnly, SameSite=Strict,
 * Secure behind https, expiring with the session.
 */
function setSessionCookie(response: NextResponse, request: NextRequest, sessionId: string, expiresAtEpochMs: number) {
  response.cookies.set(SESSION_COOKIE, sessionId, {
    httpOnly: true,
    sameSite: "strict",
    secure: overHttps(request),
    path: "/",
    maxAge: Math.max(1, Math.floor((expiresAtEpochMs - Date.now()) / 1000)),
  });
}

/**
 * A 303 to a path of this dashboard with a relative `Location`: the browser resolves it against the
 * address it used (another host name, or behind a proxy), not the server's own idea of its address.
 */
function seeOther(path: string): NextResponse {
  return new NextResponse(null, { status: 303, headers: { location: path, "cache-control": "no-store" } });
}

const CROSS_SITE = "Sign-in and sign-out are accepted only from the dashboard's own pages.";

/**
 * Signs in: the key goes to the executor's `sessions.create` once; the browser gets only the session
 * id. Refused unless the request comes from the dashboard's own pages (login CSRF).
 */
export async function POST(request: NextRequest): Promise<NextResponse> {
  // Without JavaScript the login form posts form data here (never a GET: the key stays out of URLs).
  const isForm = (request.headers.get("content-type") ?? "").includes("application/x-www-form-urlencoded");
  if (!fromOwnPages(request)) {
    return isForm
      ? new NextResponse(CROSS_SITE, { status: 403 })
      : NextResponse.json({ error: CROSS_SITE }, { status: 403 });
  }
  if (isForm) {
    const form = await request.formData().catch(() => null);
    const apiKey = String(form?.get("apiKey") ?? "");
    const next = safeNext(form?.get("next"));
    const signIn = loginBody.safeParse({ apiKey }).success
      ? await openSession(apiKey.trim(), forwardedFor(request.headers))
      : null;
    if (!signIn?.ok) {
      const failed = signIn?.reason === "unreachable" ? "unreachable" : "1";
      return seeOther(`/login?failed=${failed}&next=${encodeURIComponent(next)}`);
    }
    const response = seeOther(next);
    setSessionCookie(response, request, signIn.sessionId, signIn.expiresAtEpochMs);
    return response;
  }
  const body = loginBody.safeParse(await request.json().catch(() => null));
  if (!body.success) {
    return NextResponse.json({ error: body.error.issues[0]?.message ?? "Enter an API key." }, { status: 400 });
  }
  const signIn = await openSession(body.data.apiKey, forwardedFor(request.headers));
  if (!signIn.ok) {
    const status = { unreachable: 502, role: 403, throttled: 429, invalid: 401 }[signIn.reason];
    return NextResponse.json({ error: signIn.message }, { status });
  }
  const response = NextResponse.json({ name: signIn.session.name, role: signIn.session.role });
  setSessionCookie(response, request, signIn.sessionId, signIn.expiresAtEpochMs);
  return response;
}

/** Signs out: ends the session at the executor (the id is refused from then on) and clears the cookie. */
export async function DELETE(request: NextRequest): Promise<NextResponse> {
  if (!fromOwnPages(request)) return NextResponse.json({ error: CROSS_SITE }, { status: 403 });
  const sessionId = request.cookies.get(SESSION_COOKIE)?.value;
  if (sessionId) await endSession(sessionId, forwardedFor(request.headers));
  const response = new NextResponse(null, { status: 204 });
  response.cookies.set(SESSION_COOKIE, "", {
    httpOnly: true,
    sameSite: "strict",
    secure: overHttps(request),
    path: "/",
    maxAge: 0,
  });
  return response;
}
