import type { IncomingMessage } from "node:http";
import { BlockList, isIP } from "node:net";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { Env } from "../env.ts";
import type { Logger } from "../logger.ts";

/** The verdict on one failed authentication. */
export type FailureVerdict = { throttled: false } | { throttled: true; retryAfterS: number };

/**
 * Throttles failed authentication per client address (in this process's memory): after
 * `TRISTATE_AUTH_FAILURES` failures within `TRISTATE_AUTH_FAILURE_WINDOW_MS`, further bad keys from that
 * address are answered 429 for `TRISTATE_AUTH_BLOCK_MS`. Only failures are counted, and a valid key is
 * never throttled (the caller verifies the key first and asks here only when it failed).
 */
export interface AuthThrottle {
  /** The address failures are counted under: the peer, or `X-Forwarded-For`'s client behind a trusted proxy. */
  clientOf(req: IncomingMessage): string;
  /** Records a failed authentication from `client` and says whether to refuse it with 429. */
  failed(client: string): Promise<FailureVerdict>;
  /** Whether a TCP peer's address is one of `TRISTATE_TRUSTED_PROXIES` (e.g. the dashboard's server). */
  isTrustedPeer(address: string): boolean;
}

/** While an address is throttled, one log line per this many refused attempts (the first always). */
const LOG_EVERY = 100;

export function createAuthThrottle(env: Env, logger: () => Logger): AuthThrottle {
  const limit = env.TRISTATE_AUTH_FAILURES;
  const limiter = new RateLimiterMemory({
    keyPrefix: "auth-failures",
    points: limit,
    duration: env.TRISTATE_AUTH_FAILURE_WINDOW_MS / 1000,
    blockDuration: env.TRISTATE_AUTH_BLOCK_MS / 1000,
  });
  const trusted = new BlockList();
  for (const entry of env.TRISTATE_TRUSTED_PROXIES) {
    const [address = "", prefix] = entry.split("/");
    const family = isIP(address) === 6 ? "ipv6" : "ipv4";
    if (prefix === undefined) trusted.addAddress(address, family);
    else trusted.addSubnet(address, Number(prefix), family);
  }
  const isTrusted = (address: string) => {
    const family = isIP(address);
    return family !== 0 && trusted.check(address, family === 6 ? "ipv6" : "ipv4");
  };

  return {
    isTrustedPeer: (address) => isTrusted(normalizeAddress(address)),
    clientOf(req) {
      let client = normalizeAddress(req.socket.remoteAddress ?? "");
      const forwarded = req.headers["x-forwarded-for"];
      if (!env.TRISTATE_TRUSTED_PROXIES.length || !forwarded || !isTrusted(client)) return client;
      // Walk from the nearest hop back: the first address not of a trusted proxy is the client.
      const hops = (Array.isArray(forwarded) ? forwarded.join(",") : forwarded).split(",").map((h) => h.trim());
      for (const hop of hops.reverse()) {
        const address = normalizeAddress(hop);
        if (!isIP(address)) break; // an unreadable hop: stop at the last proxy we trust
        client = address;
        if (!isTrusted(address)) break;
      }
      return client;
    },
    async failed(client) {
      const key = throttleKey(client);
      try {
        await limiter.consume(key);
        logger().warn({ client, limit }, "authentication failed: invalid, revoked or malformed API key");
        return { throttled: false };
      } catch (error) {
        if (!(error instanceof RateLimiterRes)) throw error;
        const retryAfterS = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
        const refused = error.consumedPoints - limit;
        if (refused === 1 || refused % LOG_EVERY === 0) {
          logger().warn(
            { client, limit, windowMs: env.TRISTATE_AUTH_FAILURE_WINDOW_MS, refused, retryAfterS },
            "authentication throttled: too many failed API keys from this address (429)",
          );
        }
        return { throttled: true, retryAfterS };
      }
    },
  };
}

/** `::ffff:10.0.0.1` → `10.0.0.1`; drops an IPv6 zone (`fe80::1%eth0`). */
function normalizeAddress(address: string): string {
  const bare = address.trim().replace(/%.*$/, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  return mapped?.[1] ?? bare;
}

/**
 * The key failures are counted under: an IPv4 address, or the /64 network of an IPv6 address (one
 * host usually holds a whole /64, so counting single IPv6 addresses would not hold anyone back).
 */
export function throttleKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = "", tail] = address.toLowerCase().split("::");
  const groups = (part: string | undefined) => (part ? part.split(":") : []);
  const left = groups(head);
  const right = groups(tail);
  // An IPv4 tail (`64:ff9b::1.2.3.4`) stands for two groups.
  const width = (list: string[]) => list.reduce((n, g) => n + (g.includes(".") ? 2 : 1), 0);
  const full = tail === undefined ? left : [...left, ...Array(8 - width(left) - width(right)).fill("0"), ...right];
  return `${full
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(":")}::/64`;
}
