/**
 * The AWS SDK for JavaScript v3 (smithy). Not installed in this workspace: shapes from its source.
 *
 * The SDK's transport errors are Node's (`ECONNREFUSED`, `ECONNRESET`, …; Node's adapter) or
 * `@smithy/node-http-handler`'s timeouts, `Object.assign(new Error(…), { name: "TimeoutError" })`
 * (`src/set-connection-timeout.ts`, `src/set-socket-timeout.ts`; the undici/fetch adapter's name
 * rule makes them UNKNOWN `READ_TIMEOUT`). `@smithy/middleware-retry` `src/retryMiddleware.ts`, when
 * it gives up, sets `$metadata.attempts = attempts + 1` (and `totalRetryDelay`) on the error it
 * throws; service errors (`ServiceException`) carry `$metadata.attempts` the same way.
 */
import { type ClientErrorAdapter, countAbove, isObject } from "./adapter.ts";

/**
 * The AWS SDK's adapter: `$metadata.attempts` > 1 → retried (its default strategy retries
 * ECONNREFUSED, so a refused connection after three attempts is UNKNOWN).
 */
export const awsSdk: ClientErrorAdapter = {
  name: "aws-sdk v3",
  retries(link) {
    const metadata = link.$metadata;
    return isObject(metadata) && countAbove(metadata.attempts, 1)
      ? `the AWS SDK made ${metadata.attempts} attempts`
      : undefined;
  },
};
