/**
 * stripe-node (v8–v23). Shapes, from `src/Error.ts` and `src/RequestSender.ts`: a transport failure
 * is a `StripeConnectionError` (`type: "StripeConnectionError"`, message "An error occurred with our
 * connection to Stripe. Request was retried N times.", the Node error not kept as `cause` today);
 * `RequestSender` retries it `maxNetworkRetries` times (and 409s, 5xx answers, `Stripe-Should-Retry:
 * true`) before throwing the last one.
 */
import type { ClientErrorAdapter } from "./adapter.ts";

/**
 * Stripe's adapter: a `StripeConnectionError` is never "not sent" from the error alone → retried
 * (issue 21 §2): earlier attempts may have been written, whatever a future `cause` says.
 */
export const stripe: ClientErrorAdapter = {
  name: "stripe",
  retries(link) {
    return link.type === "StripeConnectionError"
      ? "the Stripe SDK retries connection errors (maxNetworkRetries) before it reports one"
      : undefined;
  },
};
