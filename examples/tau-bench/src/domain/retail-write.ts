/**
 * Retail write tools (BEHAVIOUR.md §3): pure functions over a {@link RetailDb}, mutating it and
 * returning the reference output string.
 */
import type { RetailDb } from "./database.ts";
import { deepCopy, dict, getDict, getKey, getList, type PyDict, PyError, type PyNumber, pyDumps } from "./py-json.ts";
import { abs, add, round2, sub, val } from "./py-number.ts";
import {
  argStr,
  argStrList,
  getNum,
  getStr,
  lookup,
  missingItem,
  paymentMethods,
  sortedStrings,
  type ToolFn,
} from "./tool-kit.ts";

const CANCEL_REASONS = ["no longer needed", "ordered by mistake"];

/** §3.1 `cancel_pending_order(order_id, reason)` */
export const cancelPendingOrder: ToolFn<RetailDb> = (db, args) => {
  const orderId = argStr(args, "order_id");
  const reason = argStr(args, "reason");
  const current = db.orders.get(orderId);
  if (!current) return "Error: order not found";
  if (current.get("status") !== "pending") return "Error: non-pending order cannot be cancelled";
  if (!CANCEL_REASONS.includes(reason)) return "Error: invalid reason";
  const order = db.orders.mut(orderId) as PyDict;
  const history = getList(order, "payment_history");
  const refunds: PyDict[] = [];
  for (const entry of history) {
    const amount = getNum(entry, "amount");
    const methodId = getStr(entry, "payment_method_id");
    refunds.push(
      dict([
        ["transaction_type", "refund"],
        ["amount", amount],
        ["payment_method_id", methodId],
      ]),
    );
    if (methodId.includes("gift_card")) {
      const user = db.users.mut(getStr(order, "user_id"));
      const method = lookup(paymentMethods(user as PyDict), methodId);
      method.set("balance", round2(add(getNum(method, "balance"), amount)));
    }
  }
  order.set("status", "cancelled");
  order.set("cancel_reason", reason);
  history.push(...refunds);
  return pyDumps(order);
};

/** Pairwise variant check and running price difference shared by exchange and modify-items (§3.2 step 5). */
function priceDifference(db: RetailDb, order: PyDict, itemIds: string[], newItemIds: string[]): PyNumber | string {
  let diff: PyNumber = 0;
  const items = getList(order, "items");
  for (let k = 0; k < itemIds.length; k++) {
    const oldId = itemIds[k] as string;
    const newId = newItemIds[k] as string;
    const item = items.find((it) => getKey(it, "item_id") === oldId) as PyDict;
    const product = db.products.get(getStr(item, "product_id"));
    if (!product) throw new PyError(`'${getStr(item, "product_id")}'`);
    const variant = getDict(product, "variants").get(newId);
    if (!(variant instanceof Map) || !variant.get("available"))
      return `Error: new item ${newId} not found or available`;
    diff = add(diff, sub(getNum(variant, "price"), getNum(item, "price")));
  }
  return diff;
}

/** §3.2 `exchange_delivered_order_items(order_id, item_ids, new_item_ids, payment_method_id)` */
export const exchangeDeliveredOrderItems: ToolFn<RetailDb> = (db, args) => {
  const orderId = argStr(args, "order_id");
  const itemIds = argStrList(args, "item_ids");
  const newItemIds = argStrList(args, "new_item_ids");
  const methodId = argStr(args, "payment_method_id");
  const current = db.orders.get(orderId);
  if (!current) return "Error: order not found";
  if (current.get("status") !== "delivered") return "Error: non-delivered order cannot be exchanged";
  const missing = missingItem(current, itemIds);
  if (missing !== undefined) return `Error: ${missing} not found`;
  if (itemIds.length !== newItemIds.length) return "Error: the number of items to be exchanged should match";
  const raw = priceDifference(db, current, itemIds, newItemIds);
  if (typeof raw === "string") return raw;
  const diff = round2(raw);
  const user = db.users.get(getStr(current, "user_id")) as PyDict;
  const method = paymentMethods(user).get(methodId);
  if (!(method instanceof Map)) return "Error: payment method not found";
  if (method.get("source") === "gift_card" && val(getNum(method, "balance")) < val(diff)) {
    return "Error: insufficient gift card balance to pay for the price difference";
  }
  const order = db.orders.mut(orderId) as PyDict;
  order.set("status", "exchange requested");
  order.set("exchange_items", sortedStrings(itemIds));
  order.set("exchange_new_items", sortedStrings(newItemIds));
  order.set("exchange_payment_method_id", methodId);
  order.set("exchange_price_difference", diff);
  return pyDumps(order);
};

function addressFrom(args: PyDict): PyDict {
  return dict(
    ["address1", "address2", "city", "state", "country", "zip"].map((k) => [k, argStr(args, k)] as [string, string]),
  );
}

/** §3.3 `modify_pending_order_address(order_id, address1, address2, city, state, country, zip)` */
export const modifyPendingOrderAddress: ToolFn<RetailDb> = (db, args) => {
  const orderId = argStr(args, "order_id");
  const current = db.orders.get(orderId);
  if (!current) return "Error: order not found";
  if (current.get("status") !== "pending") return "Error: non-pending order cannot be modified";
  const order = db.orders.mut(orderId) as PyDict;
  order.set("address", addressFrom(args));
  return pyDumps(order);
};

/** §3.4 `modify_pending_order_items(order_id, item_ids, new_item_ids, payment_method_id)` */
export const modifyPendingOrderItems: ToolFn<RetailDb> = (db, args) => {
  const orderId = argStr(args, "order_id");
  const itemIds = argStrList(args, "item_ids");
  const newItemIds = argStrList(args, "new_item_ids");
  const methodId = argStr(args, "payment_method_id");
  const current = db.orders.get(orderId);
  if (!current) return "Error: order not found";
  if (current.get("status") !== "pending") return "Error: non-pending order cannot be modified";
  const missing = missingItem(current, itemIds);
  if (missing !== undefined) return `Error: ${missing} not found`;
  if (itemIds.length !== newItemIds.length) return "Error: the number of items to be exchanged should match";
  const diff = priceDifference(db, current, itemIds, newItemIds);
  if (typeof diff === "string") return diff;
  const userId = getStr(current, "user_id");
  const method0 = paymentMethods(db.users.get(userId) as PyDict).get(methodId);
  if (!(method0 instanceof Map)) return "Error: payment method not found";
  const isGift = method0.get("source") === "gift_card";
  if (isGift && val(getNum(method0, "balance")) < val(diff)) {
    return "Error: insufficient gift card balance to pay for the new item";
  }
  const order = db.orders.mut(orderId) as PyDict;
  getList(order, "payment_history").push(
    dict([
      ["transaction_type", val(diff) > 0 ? "payment" : "refund"],
      ["amount", abs(diff)],
      ["payment_method_id", methodId],
    ]),
  );
  if (isGift) {
    const method = lookup(paymentMethods(db.users.mut(userId) as PyDict), methodId);
    method.set("balance", round2(sub(getNum(method, "balance"), diff)));
  }
  const items = getList(order, "items");
  for (let k = 0; k < itemIds.length; k++) {
    const oldId = itemIds[k] as string;
    const newId = newItemIds[k] as string;
    const item = items.find((it) => getKey(it, "item_id") === oldId) as PyDict;
    const product = db.products.get(getStr(item, "product_id")) as PyDict;
    const variant = getDict(getDict(product, "variants"), newId);
    item.set("item_id", newId);
    item.set("price", getNum(variant, "price"));
    item.set("options", deepCopy(getDict(variant, "options")));
  }
  order.set("status", "pending (item modified)");
  return pyDumps(order);
};

/** §3.5 `modify_pending_order_payment(order_id, payment_method_id)` */
export const modifyPendingOrderPayment: ToolFn<RetailDb> = (db, args) => {
  const orderId = argStr(args, "order_id");
  const methodId = argStr(args, "payment_method_id");
  const current = db.orders.get(orderId);
  if (!current) return "Error: order not found";
  if (current.get("status") !== "pending") return "Error: non-pending order cannot be modified";
  const userId = getStr(current, "user_id");
  const newMethod0 = paymentMethods(db.users.get(userId) as PyDict).get(methodId);
  if (!(newMethod0 instanceof Map)) return "Error: payment method not found";
  const history0 = getList(current, "payment_history");
  if (history0.length > 1) return "Error: there should be exactly one payment for a pending order";
  if (history0.length === 0) throw new PyError("list index out of range");
  const first = history0[0] as PyDict;
  if (first.get("transaction_type") !== "payment")
    return "Error: there should be exactly one payment for a pending order";
  const oldId = getStr(first, "payment_method_id");
  if (oldId === methodId) return "Error: the new payment method should be different from the current one";
  const amount = getNum(first, "amount");
  if (newMethod0.get("source") === "gift_card" && val(getNum(newMethod0, "balance")) < val(amount)) {
    return "Error: insufficient gift card balance to pay for the order";
  }
  const order = db.orders.mut(orderId) as PyDict;
  getList(order, "payment_history").push(
    dict([
      ["transaction_type", "payment"],
      ["amount", amount],
      ["payment_method_id", methodId],
    ]),
    dict([
      ["transaction_type", "refund"],
      ["amount", amount],
      ["payment_method_id", oldId],
    ]),
  );
  if (newMethod0.get("source") === "gift_card") {
    const method = lookup(paymentMethods(db.users.mut(userId) as PyDict), methodId);
    method.set("balance", round2(sub(getNum(method, "balance"), amount)));
  }
  if (oldId.includes("gift_card")) {
    const method = lookup(paymentMethods(db.users.mut(userId) as PyDict), oldId);
    method.set("balance", round2(add(getNum(method, "balance"), amount)));
  }
  return pyDumps(order);
};

/** §3.6 `modify_user_address(user_id, address1, address2, city, state, country, zip)` */
export const modifyUserAddress: ToolFn<RetailDb> = (db, args) => {
  const userId = argStr(args, "user_id");
  const address = addressFrom(args);
  const user = db.users.mut(userId);
  if (!user) return "Error: user not found";
  user.set("address", address);
  return pyDumps(user);
};

/** §3.7 `return_delivered_order_items(order_id, item_ids, payment_method_id)` */
export const returnDeliveredOrderItems: ToolFn<RetailDb> = (db, args) => {
  const orderId = argStr(args, "order_id");
  const itemIds = argStrList(args, "item_ids");
  const methodId = argStr(args, "payment_method_id");
  const current = db.orders.get(orderId);
  if (!current) return "Error: order not found";
  if (current.get("status") !== "delivered") return "Error: non-delivered order cannot be returned";
  const user = db.users.get(getStr(current, "user_id")) as PyDict;
  if (!paymentMethods(user).has(methodId)) return "Error: payment method not found";
  if (!methodId.includes("gift_card")) {
    const first = getList(current, "payment_history")[0];
    if (first === undefined) throw new PyError("list index out of range");
    if (methodId !== getKey(first, "payment_method_id")) {
      return "Error: payment method should be either the original payment method or a gift card";
    }
  }
  if (missingItem(current, itemIds) !== undefined) return "Error: some item not found";
  const order = db.orders.mut(orderId) as PyDict;
  order.set("status", "return requested");
  order.set("return_items", sortedStrings(itemIds));
  order.set("return_payment_method_id", methodId);
  return pyDumps(order);
};
