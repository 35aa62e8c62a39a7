import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CanonicalisationError, canon } from "./canon.ts";

const d2 = canon.decimal(2);

describe("canon.decimal", () => {
  it('49.9, "49.9", "49.90" and 0.1 + 0.2 → 2-place strings, never float noise', () => {
    expect([49.9, "49.9", "49.90", " 49.90 ", 0.1 + 0.2, 100, "1e2", "-0.001"].map((v) => d2(v, "amount"))).toEqual([
      "49.90",
      "49.90",
      "49.90",
      "49.90",
      "0.30",
      "100.00",
      "100.00",
      "0.00",
    ]);
  });

  it("rounds half to even (banker's rounding)", () => {
    expect(d2("0.125", "a")).toBe("0.12");
    expect(d2("0.135", "a")).toBe("0.14");
  });

  it("names the field and the rule for non-numeric, non-finite, empty values", () => {
    for (const bad of ["forty", "", "1,5", Number.NaN, Number.POSITIVE_INFINITY, null, {}, true]) {
      expect(() => d2(bad, "amount")).toThrow(CanonicalisationError);
      try {
        d2(bad, "amount");
      } catch (e) {
        expect((e as CanonicalisationError).field).toBe("amount");
        expect((e as CanonicalisationError).rule).toMatch(/decimal/);
      }
    }
  });

  it("property: number and its string form canonicalise alike, and canonical form is a fixed point", () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e9, max: 1e9, noNaN: true, noDefaultInfinity: true }),
        fc.integer({ min: 0, max: 6 }),
        (x, places) => {
          const c = canon.decimal(places);
          const a = c(x, "v");
          expect(c(String(x), "v")).toBe(a);
          expect(c(a, "v")).toBe(a);
          expect(a).toMatch(places === 0 ? /^-?\d+$/ : new RegExp(`^-?\\d+\\.\\d{${places}}$`));
        },
      ),
    );
  });

  it("property: upper/lower/trim are idempotent and ignore surrounding space", () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        for (const c of [canon.upper, canon.lower, canon.trim]) {
          const once = c(s, "f");
          expect(c(once, "f")).toBe(once);
          expect(c(`  ${s}\t`, "f")).toBe(once);
        }
      }),
    );
  });

  it("rejects bad places", () => {
    expect(() => canon.decimal(-1)).toThrow(RangeError);
    expect(() => canon.decimal(1.5)).toThrow(RangeError);
  });
});

describe("canonicalisers normalise Unicode to NFC before anything else", () => {
  it("composed and decomposed spellings give one canonical string for every canonicaliser", () => {
    const composed = "caf\u00e9-2";
    const decomposed = "cafe\u0301-2";
    for (const c of [canon.upper, canon.lower, canon.trim, canon.exact]) {
      expect(c(decomposed, "order_id")).toBe(c(composed, "order_id"));
    }
    expect(canon.upper(` ${decomposed} `, "order_id")).toBe("CAF\u00c9-2");
  });
});
