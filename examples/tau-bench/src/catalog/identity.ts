/**
 * Business identity of every τ-bench write tool, for the executor's idempotency keys. Only required
 * arguments are identity (a missing one is refused before sending); lists and objects are compared
 * as RFC 8785 canonical JSON, so `247.0` and `247` or a reordered passenger object give the same key.
 */
import { CanonicalisationError, type Canonicaliser, canon } from "@tristate/core";
import canonicalize from "canonicalize";
import type { DomainName } from "../domain/database.ts";

/** Canonical JSON of any JSON value (lists, objects, numbers): RFC 8785. */
export const canonJson: Canonicaliser = (value, field) => {
  const text = canonicalize(value);
  if (text === undefined) throw new CanonicalisationError(field, "must be JSON");
  return text;
};

const ADDRESS = ["address1", "address2", "city", "state", "country", "zip"] as const;

function fields(trimmed: readonly string[], json: readonly string[] = []): Record<string, Canonicaliser> {
  const out: Record<string, Canonicaliser> = { tenant: canon.trim };
  for (const f of trimmed) out[f] = canon.trim;
  for (const f of json) out[f] = canonJson;
  return out;
}

/**
 * Identity fields per write tool (`tenant` — the service instance, i.e. the customer's account — is
 * identity too). What makes two calls "the same effect": the record they change and how.
 */
export const WRITE_IDENTITY: Record<DomainName, Record<string, Record<string, Canonicaliser>>> = {
  retail: {
    cancel_pending_order: fields(["order_id", "reason"]),
    exchange_delivered_order_items: fields(["order_id", "payment_method_id"], ["item_ids", "new_item_ids"]),
    modify_pending_order_items: fields(["order_id", "payment_method_id"], ["item_ids", "new_item_ids"]),
    return_delivered_order_items: fields(["order_id", "payment_method_id"], ["item_ids"]),
    modify_pending_order_payment: fields(["order_id", "payment_method_id"]),
    modify_pending_order_address: fields(["order_id", ...ADDRESS]),
    modify_user_address: fields(["user_id", ...ADDRESS]),
  },
  airline: {
    book_reservation: fields(
      ["user_id", "origin", "destination", "flight_type", "cabin", "insurance"],
      ["flights", "passengers", "payment_methods", "total_baggages", "nonfree_baggages"],
    ),
    cancel_reservation: fields(["reservation_id"]),
    update_reservation_flights: fields(["reservation_id", "cabin", "payment_id"], ["flights"]),
    update_reservation_baggages: fields(["reservation_id", "payment_id"], ["total_baggages", "nonfree_baggages"]),
    update_reservation_passengers: fields(["reservation_id"], ["passengers"]),
    send_certificate: fields(["user_id"], ["amount"]),
  },
};
