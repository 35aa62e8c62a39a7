/**
 * The browser's address, passed on to the executor as `X-Forwarded-For` so that its failed-sign-in
 * throttle counts per browser, not per dashboard server. The dashboard's server (`server.mjs`) appends
 * its TCP peer to the chain it received; the executor believes the chain only from addresses listed in
 * its `TRISTATE_TRUSTED_PROXIES` (set it to this server's address), walking back from the nearest hop.
 */

/** The header name. */
export const FORWARDED_FOR = "x-forwarded-for";

/** At most this many hops (the nearest ones) are passed on. */
const MAX_HOPS = 10;

/** An IPv4 or IPv6 address as a hop may hold it (the executor parses it again). */
const ADDRESS = /^[0-9A-Fa-f.:]{2,45}(%[0-9A-Za-z_.-]{1,20})?$/;

/**
 * The `X-Forwarded-For` chain to send the executor for a request with these headers, or undefined
 * when there is none. Only the readable hops nearest to this server are kept (the executor stops at
 * the first unreadable hop anyway, so dropping it and everything before it changes nothing), at most
 * {@link MAX_HOPS}.
 */
export function forwardedFor(headers: Pick<Headers, "get">): string | undefined {
  const value = headers.get(FORWARDED_FOR);
  if (!value) return undefined;
  const kept: string[] = [];
  for (const hop of value.split(",").reverse()) {
    const address = hop.trim();
    if (!ADDRESS.test(address) || kept.length === MAX_HOPS) break;
    kept.unshift(address);
  }
  return kept.length ? kept.join(", ") : undefined;
}
