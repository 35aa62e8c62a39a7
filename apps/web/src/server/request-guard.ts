/**
 * Checks on the requests that change who is signed in or act on records: they must come from the
 * dashboard's own pages (login CSRF), and a redirect after sign-in must stay on the dashboard.
 */

/** The dashboard's own host as this request reached it (`Host`, else the URL's). */
function ownHost(request: Request): string {
  return request.headers.get("host") ?? new URL(request.url).host;
}

/**
 * Whether a state-changing request comes from the dashboard's own pages. Browsers state where a
 * request comes from in `Sec-Fetch-Site` (set by the browser itself, no page can forge it): only
 * `same-origin` passes. A browser without it still sends `Origin` on POST/DELETE: it must be this host
 * (the opaque `null` is refused). A client that sends neither (curl, a script) is no browser a
 * cross-site page could drive, so it passes.
 */
export function fromOwnPages(request: Request): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null) return site === "same-origin";
  const origin = request.headers.get("origin");
  if (origin === null) return true;
  try {
    return new URL(origin).host === ownHost(request);
  } catch {
    return false; // `null` (sandboxed frames, privacy-sensitive redirects) or garbage
  }
}

/** Where a sign-in lands when `next` is absent or not a path of this dashboard. */
export const DEFAULT_NEXT = "/overview";

/**
 * `next` if it is a path of this dashboard, else {@link DEFAULT_NEXT}. Browsers read `\` as `/` and drop
 * tabs and newlines in URLs, so `/\evil.example` or `/<TAB>/evil.example` would leave the site: any
 * backslash, whitespace or control character is refused, and what is left must resolve to this origin
 * with a path that does not start with `//` (after `.`/`..` segments are resolved).
 */
export function safeNext(value: unknown): string {
  const next = Array.isArray(value) ? value[0] : value;
  if (typeof next !== "string" || next.length > 2000 || !next.startsWith("/")) return DEFAULT_NEXT;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u0020\u007f-\u009f\\]/.test(next)) return DEFAULT_NEXT;
  const base = "http://dashboard.invalid";
  let url: URL;
  try {
    url = new URL(next, base);
  } catch {
    return DEFAULT_NEXT;
  }
  const path = `${url.pathname}${url.search}${url.hash}`;
  if (url.origin !== base || !path.startsWith("/") || path.startsWith("//")) return DEFAULT_NEXT;
  return path;
}
