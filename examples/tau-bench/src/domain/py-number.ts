/**
 * Python number semantics over {@link PyNumber}: int ± int → int, anything with a float → float,
 * `round(x, 2)` with exact ties to even (BEHAVIOUR.md §2.2–2.3).
 */
import { PyError, PyFloat, type PyNumber, type PyValue } from "./py-json.ts";

/** The numeric value of a Python number. */
export function val(a: PyNumber): number {
  return typeof a === "number" ? a : a.value;
}

/** True for a Python number (int or float; booleans excluded). */
export function isNum(v: PyValue | undefined): v is PyNumber {
  return typeof v === "number" || v instanceof PyFloat;
}

/** Asserts a Python number, raising Python's TypeError text otherwise. */
export function num(v: PyValue | undefined): PyNumber {
  if (isNum(v)) return v;
  throw new PyError("unsupported operand type(s) for numeric operation");
}

function make(r: number, float: boolean): PyNumber {
  return float ? new PyFloat(r) : r === 0 ? 0 : r;
}

/** `a + b` */
export function add(a: PyNumber, b: PyNumber): PyNumber {
  return make(val(a) + val(b), a instanceof PyFloat || b instanceof PyFloat);
}

/** `a - b` */
export function sub(a: PyNumber, b: PyNumber): PyNumber {
  return make(val(a) - val(b), a instanceof PyFloat || b instanceof PyFloat);
}

/** `a * b` */
export function mul(a: PyNumber, b: PyNumber): PyNumber {
  return make(val(a) * val(b), a instanceof PyFloat || b instanceof PyFloat);
}

/** `-a` (float `0.0` gives `-0.0`, int `0` gives `0`). */
export function neg(a: PyNumber): PyNumber {
  return a instanceof PyFloat ? new PyFloat(-a.value) : a === 0 ? 0 : -a;
}

/** `abs(a)` */
export function abs(a: PyNumber): PyNumber {
  return a instanceof PyFloat ? new PyFloat(Math.abs(a.value)) : Math.abs(a);
}

/** Python's `round(x, 2)` on a float value: exact binary value to the nearest cent, exact ties to even. */
export function roundFloat2(v: number): number {
  if (v === 0 || !Number.isFinite(v) || Math.abs(v) >= 1e21) return v;
  const m = v * 8;
  if (Number.isInteger(m) && Math.abs(m) % 2 === 1) {
    // Exact tie: v = m/8 with m odd, so v*100 = 25m/2 and the two candidate cents are (25m ± 1)/2.
    const t = BigInt(m) * 25n;
    const lo = (t - 1n) / 2n;
    const hi = (t + 1n) / 2n;
    const cents = lo % 2n === 0n ? lo : hi;
    const negative = cents < 0n;
    const digits = (negative ? -cents : cents).toString().padStart(3, "0");
    const r = Number(`${digits.slice(0, -2)}.${digits.slice(-2)}`);
    return negative || (cents === 0n && v < 0) ? -r : r;
  }
  return Number(v.toFixed(2));
}

/** Python's `round(x, 2)`: ints unchanged, floats rounded per §2.3. */
export function round2(x: PyNumber): PyNumber {
  return x instanceof PyFloat ? new PyFloat(roundFloat2(x.value)) : x;
}

/** Python's `max(0, x)`: returns the int `0` unless `x > 0`. */
export function maxZero(x: PyNumber): PyNumber {
  return val(x) > 0 ? x : 0;
}
