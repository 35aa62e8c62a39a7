import { describe, expect, it } from "vitest";
import { requestIdFor } from "./request-id";

const of = (value?: string) => requestIdFor(new Headers(value === undefined ? {} : { "x-request-id": value }));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("requestIdFor", () => {
  it("keeps the browser's valid id", () => {
    expect(of("turn-1/call 2")).toBe("turn-1/call 2");
    expect(of("r".repeat(200))).toBe("r".repeat(200));
  });
  it("makes a new UUID for none, an empty or an over-long one, each time a new one", () => {
    for (const value of [undefined, "", "r".repeat(201)]) expect(of(value)).toMatch(UUID);
    expect(of()).not.toBe(of());
  });
});
