/** Retail read tools (BEHAVIOUR.md §4): pure functions over a {@link RetailDb}. */
import { calculate } from "./calculate.ts";
import type { RetailDb } from "./database.ts";
import { getDict, type PyDict, pyDumps } from "./py-json.ts";
import { argStr, getStr, type ToolFn } from "./tool-kit.ts";

/** `calculate(expression)` (§6.1) */
export const calculateTool: ToolFn<unknown> = (_db, args) => calculate(argStr(args, "expression"));

/** `think(thought)`: always the empty string. */
export const think: ToolFn<unknown> = (_db, args) => {
  argStr(args, "thought");
  return "";
};

/** `transfer_to_human_agents(summary)`: always `Transfer successful`. */
export const transferToHumanAgents: ToolFn<unknown> = (_db, args) => {
  argStr(args, "summary");
  return "Transfer successful";
};

/** `find_user_id_by_email(email)`: first user whose email matches ignoring case. */
export const findUserIdByEmail: ToolFn<RetailDb> = (db, args) => {
  const email = argStr(args, "email").toLowerCase();
  for (const [id, user] of db.users.entries()) {
    if (getStr(user, "email").toLowerCase() === email) return id;
  }
  return "Error: user not found";
};

/** `find_user_id_by_name_zip(first_name, last_name, zip)` */
export const findUserIdByNameZip: ToolFn<RetailDb> = (db, args) => {
  const first = argStr(args, "first_name").toLowerCase();
  const last = argStr(args, "last_name").toLowerCase();
  const zip = argStr(args, "zip");
  for (const [id, user] of db.users.entries()) {
    const name = getDict(user, "name");
    if (
      getStr(name, "first_name").toLowerCase() === first &&
      getStr(name, "last_name").toLowerCase() === last &&
      getStr(getDict(user, "address"), "zip") === zip
    ) {
      return id;
    }
  }
  return "Error: user not found";
};

/** `get_order_details(order_id)` */
export const getOrderDetails: ToolFn<RetailDb> = (db, args) => {
  const order = db.orders.get(argStr(args, "order_id"));
  return order ? pyDumps(order) : "Error: order not found";
};

/** `get_product_details(product_id)` */
export const getProductDetails: ToolFn<RetailDb> = (db, args) => {
  const product = db.products.get(argStr(args, "product_id"));
  return product ? pyDumps(product) : "Error: product not found";
};

/** `get_user_details(user_id)` */
export const getUserDetails: ToolFn<RetailDb> = (db, args) => {
  const user = db.users.get(argStr(args, "user_id"));
  return user ? pyDumps(user) : "Error: user not found";
};

/** `list_all_product_types()`: product name → product id, sorted by name. */
export const listAllProductTypes: ToolFn<RetailDb> = (db) => {
  const byName: PyDict = new Map();
  for (const product of db.products.values()) byName.set(getStr(product, "name"), getStr(product, "product_id"));
  const sorted: PyDict = new Map([...byName.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return pyDumps(sorted);
};
