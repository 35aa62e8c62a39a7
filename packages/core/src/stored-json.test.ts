import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { storableJson, storableValue } from "./stored-json.ts";
import { findBadText } from "./text.ts";

describe("storableJson: what a remote answered, in a form PostgreSQL's jsonb accepts", () => {
  it("NUL and lone surrogates become the literal text of their JSON escape, in values and property names", () => {
    const answer = { id: "fx_1", note: "a\u0000b", "k\u0000": "\ud800x", tail: "y\udc00", pair: "😀" };
    expect(storableValue(answer)).toEqual({
      id: "fx_1",
      note: "a\\u0000b",
      "k\\u0000": "\\ud800x",
      tail: "y\\udc00",
      pair: "😀",
    });
  });

  it("leaves other escapes alone (a literal backslash before u0000 stays what it was)", () => {
    const value = { a: "back\\u0000slash", b: "tab\there", c: 'quote"' };
    expect(storableJson(value)).toBe(JSON.stringify(value));
  });

  it("whatever the strings, the stored value has no NUL and no lone surrogate, and clean values are unchanged", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: "binary" }), (json, text) => {
        const value = { json, text, [text]: text };
        expect(findBadText(storableValue(value))).toBeNull();
        // Clean values are stored as JSON holds them (JSON has no -0: it reads back as 0).
        if (findBadText(value) === null) expect(storableValue(value)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });
});
