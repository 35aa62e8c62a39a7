/**
 * got (v11–v14), and ky, whose `HTTPError` has the same name.
 *
 * Shapes, from got `source/core/errors.ts`: `RequestError` (name `RequestError`, `code` copied from
 * the Node error it wraps, which it keeps as `cause` from v12) holds non-enumerable `request`,
 * `response` and `options`; `HTTPError` (name `HTTPError`, code `ERR_NON_2XX_3XX_RESPONSE`) holds
 * the `response` with `statusCode`; `TimeoutError` (name `TimeoutError`, code `ETIMEDOUT` from
 * `source/core/timed-out.ts`, with `event`: "lookup", "connect", "request", …); `ReadError`.
 * `source/core/index.ts` gives each retry a new `Request` with `retryCount + 1`, so the error of
 * the last attempt says how many came before. ky's `HTTPError` (`source/errors/HTTPError.ts`)
 * holds a fetch `Response` with `status`.
 */
import { type ClientErrorAdapter, countAbove, isObject, responseStatus } from "./adapter.ts";

/**
 * got's (and ky's) adapter: an error named `HTTPError` with a `response` status →
 * `classifyHttpStatus`; `error.request.retryCount` or `error.response.retryCount` > 0 → retried;
 * ky's `NetworkError` (with its fetch `request`) → retried.
 * got's codes are Node's (`ECONNREFUSED`, `ETIMEDOUT`, …): Node's adapter classifies them.
 */
export const got: ClientErrorAdapter = {
  name: "got / ky",
  httpStatus(link) {
    return link.name === "HTTPError" ? responseStatus(link.response) : undefined;
  },
  retries(link) {
    for (const holder of [link.request, link.response]) {
      if (isObject(holder) && countAbove(holder.retryCount, 0))
        return `the client retried ${holder.retryCount} time(s)`;
    }
    // ky v2 `source/errors/NetworkError.ts`: name "NetworkError" and the fetch `Request`; ky retries
    // network errors (for its retry methods) and the error does not say how often (issue 21 §2).
    const request = link.request;
    if (link.name === "NetworkError" && isObject(request) && typeof request.method === "string")
      return "ky retries network errors and does not say how many attempts it made";
    return undefined;
  },
};
