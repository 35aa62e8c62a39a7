import { describe, expect, it } from "vitest";
import { forwardedFor } from "./forwarded-for";

const of = (value?: string) => forwardedFor(new Headers(value === undefined ? {} : { "x-forwarded-for": value }));

describe("forwardedFor", () => {
  it("passes the chain on, nearest hop last", () => {
    expect(of("203.0.113.7")).toBe("203.0.113.7");
    expect(of("203.0.113.7, 10.0.0.2,::1")).toBe("203.0.113.7, 10.0.0.2, ::1");
    expect(of("::ffff:127.0.0.1")).toBe("::ffff:127.0.0.1");
  });
  it("drops an unreadable hop and everything before it", () => {
    expect(of("1.2.3.4, evil x, 127.0.0.1")).toBe("127.0.0.1");
    expect(of("unknown")).toBeUndefined();
    expect(of("")).toBeUndefined();
    expect(of()).toBeUndefined();
  });
  it("keeps at most ten hops", () => {
    const chain = Array.from({ length: 15 }, (_, i) => `10.0.0.${i}`).join(", ");
    expect(of(chain)?.split(", ")).toEqual(Array.from({ length: 10 }, (_, i) => `10.0.0.${i + 5}`));
  });
});
