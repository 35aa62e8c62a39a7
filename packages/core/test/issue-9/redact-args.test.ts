/**
 * Issue 9 §8, unit level: `redactArgs` (src/redact.ts) replaces every non-loggable argument value
 * found in a message by `{field}` — raw, percent-encoded or form-encoded, in any case — in nested
 * objects and arrays, numbers included; loggable fields (and everything under them) and values too
 * short to carry personal data are left alone.
 */
import { describe, expect, it } from "vitest";
import { redactArgs } from "../../src/redact.ts";

const none = { loggableFields: [] as string[] };

describe("issue 9 §8: redactArgs", () => {
  it("nested fields: a value deep in an object is replaced by its dot path", () => {
    const args = { customer: { contact: { email: "ana@example.com" } }, order_id: "A-1" };
    expect(redactArgs(none, args, "no user ana@example.com")).toBe("no user {customer.contact.email}");
  });

  it("arrays: each element is redacted under its index path", () => {
    const args = { recipients: ["ana@example.com", "bo@example.org"] };
    expect(redactArgs(none, args, "bounced: ana@example.com, bo@example.org")).toBe(
      "bounced: {recipients.0}, {recipients.1}",
    );
    const items = { items: [{ sku: "SKU-991" }, { sku: "SKU-992" }] };
    expect(redactArgs(none, items, "SKU-992 out of stock")).toBe("{items.1.sku} out of stock");
  });

  it("numbers are argument values too", () => {
    expect(redactArgs(none, { account: 40_212_345 }, "account 40212345 is frozen")).toBe("account {account} is frozen");
    expect(redactArgs(none, { pin: 4821 }, "wrong pin 4821")).toBe("wrong pin {pin}");
  });

  it("short values (under 3 characters) are left alone: they would garble the text", () => {
    const args = { country: "PT", qty: 7, email: "ana@example.com" };
    expect(redactArgs(none, args, "PT qty 7 for ana@example.com")).toBe("PT qty 7 for {email}");
  });

  it("percent-encoded path segments and form-encoded query values, in any case", () => {
    const args = { email: "Ana.Lopez+refunds@Example.com", name: "Ana Lopez" };
    // encodeURIComponent in a path: + → %2B, @ → %40; hex digits in either case.
    expect(redactArgs(none, args, "POST /users/Ana.Lopez%2Brefunds%40Example.com/refunds → 404")).toBe(
      "POST /users/{email}/refunds → 404",
    );
    expect(redactArgs(none, args, "POST /users/ana.lopez%2brefunds%40example.com/refunds")).toBe(
      "POST /users/{email}/refunds",
    );
    // application/x-www-form-urlencoded: a space becomes +.
    const query = new URLSearchParams({ name: "Ana Lopez", email: "Ana.Lopez+refunds@Example.com" }).toString();
    expect(query).toBe("name=Ana+Lopez&email=Ana.Lopez%2Brefunds%40Example.com");
    expect(redactArgs(none, args, `GET /search?${query}`)).toBe("GET /search?name={name}&email={email}");
    // Raw, upper-cased by the remote.
    expect(redactArgs(none, args, "NO USER ANA.LOPEZ+REFUNDS@EXAMPLE.COM")).toBe("NO USER {email}");
  });

  it("loggable fields stay visible, also everything under a loggable prefix, and values equal to a loggable value", () => {
    const args = {
      order_id: "ORD-7731",
      shipment: { carrier: "DHL-EXPRESS", tracking: "JD0146000034" },
      email: "ana@example.com",
      reference: "ORD-7731",
    };
    const tool = { loggableFields: ["order_id", "shipment"] };
    expect(redactArgs(tool, args, "order ORD-7731 via DHL-EXPRESS JD0146000034 for ana@example.com")).toBe(
      "order ORD-7731 via DHL-EXPRESS JD0146000034 for {email}",
    );
  });

  it("the longest value is replaced first (a value containing another is not half-redacted)", () => {
    const args = { user: "ana", email: "ana@example.com" };
    expect(redactArgs(none, args, "ana@example.com")).toBe("{email}");
  });

  it("text without argument values comes back unchanged; empty text and odd arguments never throw", () => {
    const text = "HTTP 503: gateway or server failure";
    expect(redactArgs(none, { email: "ana@example.com" }, text)).toBe(text);
    expect(redactArgs(none, { email: "ana@example.com" }, "")).toBe("");
    expect(redactArgs(undefined, null, text)).toBe(text);
    expect(redactArgs(undefined, "ana@example.com", "for ana@example.com")).not.toContain("ana@example.com");
    const circular: Record<string, unknown> = { email: "ana@example.com" };
    circular.self = circular;
    expect(redactArgs(none, circular, "for ana@example.com")).toBe("for {email}");
  });

  it("regex metacharacters in a value are matched literally", () => {
    const args = { pattern: "a.b*c(d)" };
    expect(redactArgs(none, args, "bad a.b*c(d) and axbbbcd")).toBe("bad {pattern} and axbbbcd");
  });
});
