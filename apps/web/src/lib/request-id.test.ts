import { TRPCClientError } from "@trpc/client";
import { describe, expect, it } from "vitest";
import { requestIdOf } from "./request-id";

describe("requestIdOf", () => {
  it("reads data.requestId of a tRPC error as the client builds it from the executor's answer", () => {
    const error = TRPCClientError.from({
      error: { message: "boom", code: -32600, data: { code: "BAD_REQUEST", httpStatus: 400, requestId: "req-9" } },
    });
    expect(requestIdOf(error)).toBe("req-9");
  });

  it("is undefined for errors without one", () => {
    expect(requestIdOf(new Error("x"))).toBeUndefined();
    expect(requestIdOf(TRPCClientError.from(new Error("offline")))).toBeUndefined();
    expect(requestIdOf({ data: { requestId: 5 } })).toBeUndefined();
    expect(requestIdOf(null)).toBeUndefined();
  });
});
