/**
 * axios (v1) and axios-retry (v3, v4).
 *
 * Shapes, from axios `lib/core/AxiosError.js`: every error is an `AxiosError` with
 * `isAxiosError: true`, a string `code`, `config`, `request`, and `response` (with `status`) when
 * the remote answered. `AxiosError.from(err, …)` (the Node http adapter's `req.on("error")`) keeps
 * the Node error as non-enumerable `cause`, copies its `code` (`ECONNREFUSED`, `ECONNRESET`, …;
 * Node's adapter classifies those) and its `name`. `lib/adapters/http.js` and `xhr.js` reject a
 * timeout with `ECONNABORTED` (or `ETIMEDOUT` with `transitional.clarifyTimeoutError`, Node's code);
 * `xhr.js` a network failure with `ERR_NETWORK` "Network Error" and no detail; `lib/core/settle.js`
 * a non-2xx answer with `ERR_BAD_REQUEST` (4xx) / `ERR_BAD_RESPONSE` (5xx) and the `response`.
 * axios-retry `src/index.ts` keeps its state in `config["axios-retry"]` and increments `retryCount`
 * before each retry.
 */
import { type ClientErrorAdapter, countAbove, isObject, responseStatus } from "./adapter.ts";

/**
 * axios's adapter: `response.status` of an `AxiosError` → `classifyHttpStatus`; `ECONNABORTED`
 * (its timeout) → UNKNOWN `READ_TIMEOUT`; `ERR_NETWORK` (no detail; the browser's XHR shape)
 * → UNKNOWN `AMBIGUOUS`; axios-retry's `config["axios-retry"].retryCount` > 0 → retried.
 */
export const axios: ClientErrorAdapter = {
  name: "axios",
  ambiguousCodes: {
    ECONNABORTED: "READ_TIMEOUT",
    ERR_NETWORK: "AMBIGUOUS",
  },
  httpStatus(link) {
    return link.isAxiosError === true ? responseStatus(link.response) : undefined;
  },
  retries(link) {
    const config = link.config;
    if (!isObject(config)) return undefined;
    const state = config["axios-retry"];
    return isObject(state) && countAbove(state.retryCount, 0)
      ? `axios-retry retried ${state.retryCount} time(s)`
      : undefined;
  },
};
