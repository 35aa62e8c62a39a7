// The service's internals, as the executor service uses them around a call: derive the key a call
// will carry, refuse text PostgreSQL cannot store, issue and verify a confirmation token.
// Run: `pnpm --filter @tristate/core exec tsx examples/internal.ts`.
import {
  canonicalArguments,
  canonicalIdentity,
  createConfirmationTokens,
  findBadText,
  idempotencyKey,
} from "@tristate/core/internal";
import { canon } from "@tristate/core/tools";

const args = { order_id: "a-1182", amount: "49.90" };
const spec = { order_id: canon.upper, amount: canon.decimal(2) };
const key = idempotencyKey("run-1", "step-3", "issue_refund", canonicalIdentity(args, spec));

// A token confirms the call and the canonical form of every argument shown.
const tokens = createConfirmationTokens("a shared secret of the replicas");
const call = { tenant: "default", runId: "run-1", stepId: "step-3", tool: "issue_refund", idempotencyKey: key };
const token = tokens.issue({ ...call, args: canonicalArguments({ identity: spec }, args) }, Date.now());

export const seen = {
  identity: canonicalIdentity(args, spec),
  key,
  badText: findBadText({ note: "nul \u0000 inside" }),
  ok: tokens.verify(token, { ...call, args: canonicalArguments({ identity: spec }, args) }, Date.now()).ok,
};
console.log(seen.identity, seen.badText?.path, seen.ok); // { order_id: 'A-1182', amount: '49.90' } [ 'note' ] true
