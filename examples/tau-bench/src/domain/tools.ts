/**
 * The tool registry of both domains and {@link invokeTool}, which reproduces the reference harness:
 * Python's signature errors for missing/unexpected arguments, and `Error: <message>` for exceptions.
 */
import * as airlineRead from "./airline-read.ts";
import * as airlineWrite from "./airline-write.ts";
import { type AirlineDb, airlineView, type Database, type DomainName, type RetailDb, retailView } from "./database.ts";
import { type PyDict, PyError } from "./py-json.ts";
import * as retailRead from "./retail-read.ts";
import * as retailWrite from "./retail-write.ts";
import type { ToolFn } from "./tool-kit.ts";

/** Read tools never change state; write tools may. */
export type ToolKind = "read" | "write";

/** A registered tool: its name, kind, parameters in signature order and implementation. */
export interface ToolDef {
  readonly name: string;
  readonly kind: ToolKind;
  readonly params: readonly string[];
  readonly run: (db: Database, args: PyDict) => string | null;
}

const ADDRESS = ["address1", "address2", "city", "state", "country", "zip"];

function retail(name: string, kind: ToolKind, params: string[], fn: ToolFn<RetailDb>): ToolDef {
  return { name, kind, params, run: (db, args) => fn(retailView(db), args) };
}

function airline(name: string, kind: ToolKind, params: string[], fn: ToolFn<AirlineDb>): ToolDef {
  return { name, kind, params, run: (db, args) => fn(airlineView(db), args) };
}

const SHARED_READS = (wrap: typeof retail | typeof airline) => [
  wrap("calculate", "read", ["expression"], retailRead.calculateTool),
  wrap("think", "read", ["thought"], retailRead.think),
  wrap("transfer_to_human_agents", "read", ["summary"], retailRead.transferToHumanAgents),
];

/** Every tool of every domain, keyed by domain then tool name (upstream order). */
export const TOOLS: Record<DomainName, ReadonlyMap<string, ToolDef>> = {
  retail: new Map(
    [
      ...SHARED_READS(retail),
      retail("cancel_pending_order", "write", ["order_id", "reason"], retailWrite.cancelPendingOrder),
      retail(
        "exchange_delivered_order_items",
        "write",
        ["order_id", "item_ids", "new_item_ids", "payment_method_id"],
        retailWrite.exchangeDeliveredOrderItems,
      ),
      retail("find_user_id_by_email", "read", ["email"], retailRead.findUserIdByEmail),
      retail("find_user_id_by_name_zip", "read", ["first_name", "last_name", "zip"], retailRead.findUserIdByNameZip),
      retail("get_order_details", "read", ["order_id"], retailRead.getOrderDetails),
      retail("get_product_details", "read", ["product_id"], retailRead.getProductDetails),
      retail("get_user_details", "read", ["user_id"], retailRead.getUserDetails),
      retail("list_all_product_types", "read", [], retailRead.listAllProductTypes),
      retail("modify_pending_order_address", "write", ["order_id", ...ADDRESS], retailWrite.modifyPendingOrderAddress),
      retail(
        "modify_pending_order_items",
        "write",
        ["order_id", "item_ids", "new_item_ids", "payment_method_id"],
        retailWrite.modifyPendingOrderItems,
      ),
      retail(
        "modify_pending_order_payment",
        "write",
        ["order_id", "payment_method_id"],
        retailWrite.modifyPendingOrderPayment,
      ),
      retail("modify_user_address", "write", ["user_id", ...ADDRESS], retailWrite.modifyUserAddress),
      retail(
        "return_delivered_order_items",
        "write",
        ["order_id", "item_ids", "payment_method_id"],
        retailWrite.returnDeliveredOrderItems,
      ),
    ].map((t) => [t.name, t]),
  ),
  airline: new Map(
    [
      ...SHARED_READS(airline),
      airline(
        "book_reservation",
        "write",
        [
          "user_id",
          "origin",
          "destination",
          "flight_type",
          "cabin",
          "flights",
          "passengers",
          "payment_methods",
          "total_baggages",
          "nonfree_baggages",
          "insurance",
        ],
        airlineWrite.bookReservation,
      ),
      airline("cancel_reservation", "write", ["reservation_id"], airlineWrite.cancelReservation),
      airline("get_reservation_details", "read", ["reservation_id"], airlineRead.getReservationDetails),
      airline("get_user_details", "read", ["user_id"], airlineRead.getAirlineUserDetails),
      airline("list_all_airports", "read", [], airlineRead.listAllAirports),
      airline("search_direct_flight", "read", ["origin", "destination", "date"], airlineRead.searchDirectFlight),
      airline("search_onestop_flight", "read", ["origin", "destination", "date"], airlineRead.searchOnestopFlight),
      airline("send_certificate", "write", ["user_id", "amount"], airlineWrite.sendCertificate),
      airline(
        "update_reservation_baggages",
        "write",
        ["reservation_id", "total_baggages", "nonfree_baggages", "payment_id"],
        airlineWrite.updateReservationBaggages,
      ),
      airline(
        "update_reservation_flights",
        "write",
        ["reservation_id", "cabin", "flights", "payment_id"],
        airlineWrite.updateReservationFlights,
      ),
      airline(
        "update_reservation_passengers",
        "write",
        ["reservation_id", "passengers"],
        airlineWrite.updateReservationPassengers,
      ),
    ].map((t) => [t.name, t]),
  ),
};

/** `CamelCase` class name of a tool, as in Python's signature error texts. */
export function toolClassName(name: string): string {
  return name
    .split("_")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
}

function quoteList(names: string[]): string {
  const q = names.map((n) => `'${n}'`);
  if (q.length === 1) return q[0] as string;
  if (q.length === 2) return `${q[0]} and ${q[1]}`;
  return `${q.slice(0, -1).join(", ")}, and ${q[q.length - 1]}`;
}

/**
 * Python's call-binding error for `Tool.invoke(data, **args)`, or undefined when the arguments bind
 * (BEHAVIOUR.md §1.2).
 */
export function signatureError(tool: ToolDef, args: PyDict): string | undefined {
  const where = `${toolClassName(tool.name)}.invoke()`;
  for (const k of args.keys()) {
    if (k === "data") return `Error: ${where} got multiple values for argument 'data'`;
    if (!tool.params.includes(k)) return `Error: ${where} got an unexpected keyword argument '${k}'`;
  }
  const missing = tool.params.filter((p) => !args.has(p));
  if (missing.length === 0) return undefined;
  const s = missing.length === 1 ? "" : "s";
  return `Error: ${where} missing ${missing.length} required positional argument${s}: ${quoteList(missing)}`;
}

/**
 * Calls a tool like the reference harness: unknown tool → `Unknown action <name>`, binding errors and
 * Python exceptions → `Error: …`; otherwise the tool's own output (write tools mutate `db`).
 */
export function invokeTool(db: Database, name: string, args: PyDict): string | null {
  const tool = TOOLS[db.domain].get(name);
  if (!tool) return `Unknown action ${name}`;
  const bad = signatureError(tool, args);
  if (bad) return bad;
  try {
    return tool.run(db, args);
  } catch (e) {
    if (e instanceof PyError) return `Error: ${e.message}`;
    throw e;
  }
}
