/** Python number/JSON formatting (BEHAVIOUR.md §1.3, §2) and `calculate` (§6.1). */
import { describe, expect, it } from "vitest";
import { calculate } from "../src/domain/calculate.ts";
import { floatRepr, PyFloat, pyDumps, pyParse } from "../src/domain/py-json.ts";
import { roundFloat2 } from "../src/domain/py-number.ts";

describe("Python formatting", () => {
  it("prints floats like Python repr", () => {
    const cases: [number, string][] = [
      [247, "247.0"],
      [0, "0.0"],
      [-0, "-0.0"],
      [0.15000000000000568, "0.15000000000000568"],
      [1e-5, "1e-05"],
      [1.5e-7, "1.5e-07"],
      [1e16, "1e+16"],
      [9999999999999998, "9999999999999998.0"],
      [0.0001, "0.0001"],
      [1.2676506002282294e30, "1.2676506002282294e+30"],
    ];
    for (const [x, s] of cases) expect(floatRepr(x)).toBe(s);
  });

  it("rounds to cents like Python round(x, 2), exact ties to even", () => {
    expect(roundFloat2(0.125)).toBe(0.12);
    expect(roundFloat2(0.375)).toBe(0.38);
    expect(roundFloat2(2.675)).toBe(2.67);
    expect(roundFloat2(-0.125)).toBe(-0.12);
    expect(roundFloat2(1234567.891)).toBe(1234567.89);
  });

  it("round-trips key order, numeric keys and the int/float distinction", () => {
    const text = '{"9": 1, "10": 2.0, "a": [1.5, "\\u00e9", null, true]}';
    const v = pyParse(text);
    expect([...(v as Map<string, unknown>).keys()]).toEqual(["9", "10", "a"]);
    expect((v as Map<string, unknown>).get("10")).toBeInstanceOf(PyFloat);
    expect(pyDumps(v)).toBe(text);
  });

  it("evaluates calculate like Python", () => {
    const cases: [string, string][] = [
      ["2+2", "4.0"],
      ["10/4", "2.5"],
      ["1/3", "0.33"],
      ["0.1+0.2", "0.3"],
      ["2.675", "2.67"],
      ["-0.0", "-0.0"],
      ["99999999999999999", "1e+17"],
      ["-2**2", "-4.0"],
      ["7//2", "3.0"],
      ["-7.5//2", "-4.0"],
      ["1 +", "Error: invalid syntax (<string>, line 1)"],
      ["", "Error: invalid syntax (<string>, line 0)"],
      ["(1", "Error: '(' was never closed (<string>, line 1)"],
      [
        "012",
        "Error: leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers (<string>, line 1)",
      ],
      ["2**2000", "Error: int too large to convert to float"],
      ["10.0**400", "Error: (34, 'Numerical result out of range')"],
      ["()", "Error: float() argument must be a string or a real number, not 'tuple'"],
      ["(-1)**0.5", "Error: float() argument must be a string or a real number, not 'complex'"],
      ["2(3)", "Error: 'int' object is not callable"],
      ["x", "Error: invalid characters in expression"],
    ];
    for (const [e, out] of cases) expect(calculate(e), e).toBe(out);
  });
});
