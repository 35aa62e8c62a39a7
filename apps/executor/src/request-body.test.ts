import { describe, expect, it } from "vitest";
import { BodyRefusal, parseExactJson } from "./request-body.ts";

describe("parseExactJson: numbers JSON would not keep exactly are kept as their text, with their paths", () => {
  it("integers beyond 2^53, overflow and long fractions become text; exact numbers stay numbers", () => {
    const { value, inexact } = parseExactJson(
      '{"order_id":2512292042121000001,"amount":49.9,"big":[1e400,9007199254740993],"ok":9007199254740991}',
    );
    expect(value).toEqual({
      order_id: "2512292042121000001",
      amount: 49.9,
      big: ["1e400", "9007199254740993"],
      ok: 9007199254740991,
    });
    expect(inexact).toEqual([
      { path: ["order_id"], text: "2512292042121000001" },
      { path: ["big", 0], text: "1e400" },
      { path: ["big", 1], text: "9007199254740993" },
    ]);
  });

  it("an own __proto__ holding one stays an own data property (the prototype is untouched)", () => {
    const { value } = parseExactJson('{"__proto__":12345678901234567890}');
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(value, "__proto__")?.value).toBe("12345678901234567890");
  });

  it("a property name repeated with another value is refused (JSON.parse would have rounded its numbers)", () => {
    expect(() => parseExactJson('{"a":1,"a":12345678901234567890}')).toThrow(BodyRefusal);
    expect(() => parseExactJson("{not json 12345678901234567890")).toThrow(SyntaxError);
  });
});
