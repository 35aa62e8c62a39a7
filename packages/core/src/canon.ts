import { Decimal } from "decimal.js";
import { brandError, errorKindOf } from "./brand.ts";

/**
 * Thrown when an identity field's value cannot be canonicalised. Names the field and the rule.
 */
export class CanonicalisationError extends TypeError {
  override readonly name = "CanonicalisationError";
  /** The argument field (dot path) at fault. */
  readonly field: string;
  /** The rule the value broke, e.g. `must be a finite decimal number`. */
  readonly rule: string;
  constructor(field: string, rule: string) {
    super(`${field} ${rule}`);
    this.field = field;
    this.rule = rule;
    brandError(this, "canonicalisation");
  }
}

/** True when `e` is a {@link CanonicalisationError} (from any copy of this package: a catalog's own `canon`). */
export const isCanonicalisationError = (e: unknown): e is CanonicalisationError =>
  errorKindOf(e) === "canonicalisation";

/**
 * Turns one identity field's value into its canonical string. Gets the field's dot path for errors.
 * @throws CanonicalisationError naming the field and the rule.
 */
export type Canonicaliser = (value: unknown, field: string) => string;

/**
 * The string form of an identity value, Unicode-normalised to NFC first: a composed `CAFÉ-2`
 * (U+00C9) and a decomposed one (`E` + U+0301) are one identity, one key, one effect (issue 21 §4).
 */
function text(value: unknown, field: string): string {
  if (typeof value === "string") return value.normalize("NFC");
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value === "bigint") return value.toString();
  throw new CanonicalisationError(field, "must be a string");
}

const DECIMAL_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * Canonicalisers for identity fields (source design: `str.upper` for an order id, a 2-place
 * decimal for an amount). Each returns a string so the key never depends on a JSON number's form.
 * Every one normalises a string to Unicode NFC before anything else (trimming, case, parsing), so
 * canonically equivalent spellings (composed `É`, decomposed `E` + U+0301) give one key; what a
 * custom canonicaliser returns is NFC-normalised too (`canonicalIdentity`).
 */
export const canon = {
  /** Unicode upper case of the NFC string form, trimmed (order ids, currency codes). */
  upper: ((value, field) => text(value, field).trim().toUpperCase()) as Canonicaliser,
  /** Lower case of the NFC string form, trimmed (e-mail addresses). */
  lower: ((value, field) => text(value, field).trim().toLowerCase()) as Canonicaliser,
  /** The NFC string form without surrounding white space. */
  trim: ((value, field) => text(value, field).trim()) as Canonicaliser,
  /** The NFC string form, otherwise as given (numbers as JavaScript prints them). */
  exact: ((value, field) => text(value, field)) as Canonicaliser,
  /**
   * A decimal rounded half-even to `places` decimal places, as a plain string (`49.9`, `"49.90"`,
   * `"49.9"` → `"49.90"`; `0.1 + 0.2` → `"0.30"`). Computed with decimal.js, never with floats:
   * a JS number is read from its shortest round-trip string. Units are whatever the field carries
   * (major units for `amount: 49.90`, minor units with `places = 0` for `amountCents`).
   * @param places decimal places, an integer 0–20.
   * @throws RangeError for invalid `places`; the returned canonicaliser throws CanonicalisationError
   *   for non-numeric, non-finite or empty values.
   */
  decimal(places: number): Canonicaliser {
    if (!Number.isInteger(places) || places < 0 || places > 20) {
      throw new RangeError(`canon.decimal: places must be an integer from 0 to 20, got ${String(places)}`);
    }
    return (value, field) => {
      let raw: string;
      if (typeof value === "number") {
        if (!Number.isFinite(value)) throw new CanonicalisationError(field, "must be a finite decimal number");
        raw = String(value);
      } else if (typeof value === "string") {
        raw = value.normalize("NFC").trim();
      } else if (typeof value === "bigint") {
        raw = value.toString();
      } else {
        throw new CanonicalisationError(field, "must be a decimal number or a numeric string");
      }
      if (!DECIMAL_TEXT.test(raw)) throw new CanonicalisationError(field, "must be a finite decimal number");
      const d = new Decimal(raw);
      if (!d.isFinite()) throw new CanonicalisationError(field, "must be a finite decimal number");
      const fixed = d.toDecimalPlaces(places, Decimal.ROUND_HALF_EVEN).toFixed(places);
      return fixed.startsWith("-") && new Decimal(fixed).isZero() ? fixed.slice(1) : fixed;
    };
  },
} as const;
