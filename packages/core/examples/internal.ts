// The service's internals, as the executor service uses them around a call: derive the key a call
// will carry, refuse text PostgreSQL cannot store, issue and verify a confirmation token.
// Run: `pnpm --filter @tristate/core exec tsx examples/internal.ts`.
import { canonicalIdentity, createConfirmationTokens, findBadText, idempotencyKey } from "@tristate/core/internal";
import { canon } from "@tristate/core/tools";

const args = { order_id: "a-1182", amount: "49.90" };
const identity = canonicalIdentity(args, { order_id: canon.upper, amount: canon.decimal(2) });
const key = idempotencyKey("run-1", "step-3", "issue_refund", identity);

const tokens = createConfirmationTokens("a shared secret of the replicas");
const token = tokens.issue(key, Date.now());

export const seen = {
  identity,
  key,
  badText: findBadText({ note: "nul \u0000 inside" }),
  ok: tokens.verify(token, key, Date.now()),
};
console.log(seen.identity, seen.badText?.path, seen.ok); // { order_id: 'A-1182', amount: '49.90' } [ 'note' ] true
