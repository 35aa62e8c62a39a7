import { type NextRequest, NextResponse } from "next/server";
import { z } from "zod";
import { checkKey } from "~/server/session";
import { SESSION_COOKIE, SESSION_MAX_AGE_S } from "~/server/session-cookie";

const loginBody = z.object({
  apiKey: z
    .string()
    .trim()
    .min(1, "Enter an API key.")
    .max(500, "That is too long for an API key.")
    .regex(/^[\x21-\x7e]+$/, "That is not an API key: keys are printable ASCII without spaces."),
});

/** Signs in: checks the key with the executor's `auth.whoami`, then keeps it in an httpOnly cookie. */
export async function POST(request: NextRequest): Promise<NextResponse> {
  // Without JavaScript the login form posts form data here (never a GET: the key stays out of URLs).
  const isForm = (request.headers.get("content-type") ?? "").includes("application/x-www-form-urlencoded");
  if (isForm) {
    const form = await request.formData().catch(() => null);
    const apiKey = String(form?.get("apiKey") ?? "");
    const check = loginBody.safeParse({ apiKey }).success ? await checkKey(apiKey.trim()) : null;
    if (!check?.ok) return NextResponse.redirect(new URL("/login?failed=1", request.url), 303);
    const response = NextResponse.redirect(new URL("/overview", request.url), 303);
    response.cookies.set(SESSION_COOKIE, apiKey, {
      httpOnly: true,
      sameSite: "strict",
      secure: request.nextUrl.protocol === "https:",
      path: "/",
      maxAge: SESSION_MAX_AGE_S,
    });
    return response;
  }
  const body = loginBody.safeParse(await request.json().catch(() => null));
  if (!body.success) {
    return NextResponse.json({ error: body.error.issues[0]?.message ?? "Enter an API key." }, { status: 400 });
  }
  const check = await checkKey(body.data.apiKey);
  if (!check.ok) {
    const status = check.reason === "unreachable" ? 502 : check.reason === "role" ? 403 : 401;
    return NextResponse.json({ error: check.message }, { status });
  }
  const response = NextResponse.json({ name: check.session.name, role: check.session.role });
  response.cookies.set(SESSION_COOKIE, body.data.apiKey, {
    httpOnly: true,
    sameSite: "strict",
    secure: request.nextUrl.protocol === "https:",
    path: "/",
    maxAge: SESSION_MAX_AGE_S,
  });
  return response;
}

/** Signs out. */
export function DELETE(): NextResponse {
  const response = new NextResponse(null, { status: 204 });
  response.cookies.set(SESSION_COOKIE, "", { httpOnly: true, sameSite: "strict", path: "/", maxAge: 0 });
  return response;
}
