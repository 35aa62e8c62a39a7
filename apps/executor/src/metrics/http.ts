import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthThrottle } from "../trpc/auth-throttle.ts";
import type { Services } from "../trpc/context.ts";

/** The Prometheus text exposition format's content type. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Who may scrape: every tenant's series, or one tenant's. */
type Scope = { all: true } | { all: false; tenant: string };

/**
 * `GET /metrics` (issue 23 §1; docs/metrics.md): the Prometheus text of the service's metrics.
 * `Authorization: Bearer <key>` with a viewer, operator or admin API key, or `Bearer
 * <TRISTATE_METRICS_TOKEN>` (compared in constant time). A viewer's or operator's key sees only the
 * series of its tenant (`tenant` label); an admin key and the token see all. No or a bad key: 401 with
 * `WWW-Authenticate: Bearer` (a bad key counts against the client's address like on `/trpc`, then 429
 * with `Retry-After`); an agent key: 403; another method than GET or HEAD: 405.
 */
export async function serveMetrics(
  services: Services,
  throttle: AuthThrottle,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    return plain(res, 405, "GET /metrics only", { allow: "GET, HEAD" });
  }
  const header = req.headers.authorization;
  const bearer = typeof header === "string" ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
  if (header === undefined) {
    return plain(res, 401, "a bearer token is required: Authorization: Bearer <viewer key or TRISTATE_METRICS_TOKEN>", {
      "www-authenticate": 'Bearer realm="tristate-metrics"',
    });
  }
  const scope = bearer === undefined ? null : await scopeOf(services, bearer);
  if (scope === "agent") return plain(res, 403, "agent keys may not read metrics: use a viewer key or the token");
  if (scope === null) {
    const verdict = await throttle.failed(throttle.clientOf(req));
    if (verdict.throttled) {
      return plain(res, 429, "too many failed keys from this address", { "retry-after": String(verdict.retryAfterS) });
    }
    return plain(res, 401, "invalid or revoked key", {
      "www-authenticate": 'Bearer realm="tristate-metrics", error="invalid_token"',
    });
  }
  const text = await services.metrics.scrape(scope.all ? null : scope.tenant);
  res.writeHead(200, { "content-type": PROMETHEUS_CONTENT_TYPE, "cache-control": "no-store" });
  res.end(req.method === "HEAD" ? undefined : text);
}

/** What a bearer value may see: the token and admin keys all, viewers and operators their tenant. */
async function scopeOf(services: Services, bearer: string): Promise<Scope | "agent" | null> {
  const token = services.env.TRISTATE_METRICS_TOKEN;
  if (token !== undefined && sameSecret(bearer, token)) return { all: true };
  const key = await services.keys.verify(bearer);
  if (!key) return null;
  if (key.role === "agent") return "agent";
  return key.role === "admin" ? { all: true } : { all: false, tenant: key.tenant };
}

/** Constant-time equality of two secrets of any length (their SHA-256 digests are compared). */
function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function plain(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...headers }).end(`${message}\n`);
}
