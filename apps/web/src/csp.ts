/**
 * The dashboard's Content-Security-Policy (issue 21 §7). Pages get a fresh nonce per request
 * (`proxy.ts`): scripts run only when they carry it (`'nonce-…' 'strict-dynamic'`, no
 * `'unsafe-inline'`), so a script an attacker managed to inject into a page would not run. Next.js
 * reads the nonce from the request's `Content-Security-Policy` header and puts it on its own scripts;
 * that needs each page rendered per request (the root layout reads the request's headers). Styles
 * keep `'unsafe-inline'` (the charts' inline styles). Everything else comes from this origin, and no
 * page may be framed (`frame-ancestors 'none'`).
 */

/** The request header that carries a page's nonce to the server components (`headers().get`). */
export const NONCE_HEADER = "x-nonce";

/**
 * The policy for one response.
 * @param nonce the request's nonce (base64); null for responses that are not pages (API, assets):
 *   they run no script, so scripts come only from this origin.
 * @param dev Next.js's development server (its `eval` and web socket).
 */
export function contentSecurityPolicy(nonce: string | null, dev: boolean): string {
  const scripts = nonce ? `'self' 'nonce-${nonce}' 'strict-dynamic'` : "'self'";
  return [
    "default-src 'self'",
    `script-src ${scripts}${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self'${dev ? " ws: wss:" : ""}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** A fresh nonce: 16 random bytes, base64 (Web Crypto, so it runs in the proxy's runtime too). */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}
