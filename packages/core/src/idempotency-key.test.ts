import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CanonicalisationError, canon } from "./canon.ts";
import { canonicalIdentity, idempotencyKey } from "./idempotency-key.ts";

const refundIdentity = { order_id: canon.upper, amount: canon.decimal(2) };

describe("idempotencyKey", () => {
  it("is exactly the source design's derivation", () => {
    expect(idempotencyKey("run-7", "step-3", "issue_refund", { order_id: "A-1182", amount: "49.90" })).toBe(
      "a6c763d983f2bfeb6708a2a2494a12de",
    );
  });

  it("model rephrasing does not change the key; the step does", () => {
    const a = canonicalIdentity({ order_id: "A-1182", amount: "49.90", reason: "broken" }, refundIdentity);
    const b = canonicalIdentity(
      { amount: 49.9, order_id: " a-1182", reason: "arrived damaged", extra: 1 },
      refundIdentity,
    );
    expect(idempotencyKey("r", "s", "t", a)).toBe(idempotencyKey("r", "s", "t", b));
    expect(idempotencyKey("r", "s2", "t", a)).not.toBe(idempotencyKey("r", "s", "t", a));
  });

  it("field-t13-volatile-fields-do-not-change-the-key: dot paths pick stable fields only", () => {
    const spec = { paymentId: canon.exact, "amount.value": canon.decimal(0), "amount.currency": canon.upper };
    const a1 = {
      paymentId: "P-1",
      amount: { value: 1000, currency: "EUR" },
      checkoutAttemptId: "att-1",
      sdkData: { createdAt: "t1" },
      encryptedCard: "enc-A",
    };
    const a2 = {
      encryptedCard: "enc-B",
      sdkData: { createdAt: "t2" },
      checkoutAttemptId: "att-2",
      amount: { currency: "eur", value: "1000" },
      paymentId: "P-1",
    };
    const k = (a: unknown) => idempotencyKey("r", "s", "psp.authorise", canonicalIdentity(a, spec));
    expect(k(a1)).toBe(k(a2));
    expect(k({ ...a1, amount: { value: 1200, currency: "EUR" } })).not.toBe(k(a1));
  });

  it("a missing identity field is named", () => {
    expect(() => canonicalIdentity({ amount: 1 }, refundIdentity)).toThrow(CanonicalisationError);
    expect(() => canonicalIdentity({ amount: 1 }, refundIdentity)).toThrow(/order_id/);
  });

  it("property: stable (32 hex) and injective over distinct identities in practice", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.dictionary(fc.string(), fc.string()), (run, step, id) => {
        const k = idempotencyKey(run, step, "t", id);
        expect(k).toMatch(/^[0-9a-f]{32}$/);
        expect(idempotencyKey(run, step, "t", { ...id })).toBe(k);
        // key order does not matter
        const reversed = Object.fromEntries(Object.entries(id).reverse());
        expect(idempotencyKey(run, step, "t", reversed)).toBe(k);
      }),
    );
    fc.assert(
      fc.property(fc.string(), fc.string(), (x, y) => {
        fc.pre(x !== y);
        expect(idempotencyKey("r", "s", "t", { a: x })).not.toBe(idempotencyKey("r", "s", "t", { a: y }));
      }),
    );
  });

  it("tenants: `default` keeps the documented derivation; any other tenant gets its own keys (issue 10)", () => {
    const id = { order_id: "A-1182", amount: "49.90" };
    expect(idempotencyKey("run-7", "step-3", "issue_refund", id, "default")).toBe("a6c763d983f2bfeb6708a2a2494a12de");
    const acme = idempotencyKey("run-7", "step-3", "issue_refund", id, "acme");
    expect(acme).toMatch(/^[0-9a-f]{32}$/);
    expect(acme).not.toBe("a6c763d983f2bfeb6708a2a2494a12de");
    // The tenant is hashed as a field of the canonical object, so no run id can imitate another tenant.
    expect(idempotencyKey("run-7", "step-3", "issue_refund", id, "acme")).toBe(acme);
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,20}$/),
        fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,20}$/),
        (a, b) => {
          fc.pre(a !== b);
          expect(idempotencyKey("r", "s", "t", id, a)).not.toBe(idempotencyKey("r", "s", "t", id, b));
        },
      ),
    );
  });
});
