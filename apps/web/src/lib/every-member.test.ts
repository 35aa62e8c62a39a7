import { describe, expect, it } from "vitest";
import { everyMember } from "./every-member";

describe("everyMember", () => {
  it("lists the members in the order they are named", () => {
    expect(everyMember<"b" | "a" | "c">({ b: true, a: true, c: true })).toEqual(["b", "a", "c"]);
  });
  it("does not compile when a member is missing or foreign", () => {
    // @ts-expect-error "c" is left out
    everyMember<"a" | "b" | "c">({ a: true, b: true });
    // @ts-expect-error "d" is not a member
    everyMember<"a" | "b">({ a: true, b: true, d: true });
  });
});
