import { describe, expect, it } from "vitest";
import { winnerOf } from "./winner.ts";

describe("winnerOf", () => {
  it("reads the winner of a stale-version refusal", () => {
    const data = {
      detail: {
        reason: "STALE_VERSION",
        winner: { by: "operator", actor: "ana", action: "confirm_effect", at: 5, note: "ledger" },
      },
    };
    expect(winnerOf(data)).toEqual({ by: "operator", actor: "ana", action: "confirm_effect", at: 5, note: "ledger" });
  });
  it("is null for other errors", () => {
    expect(winnerOf({ code: "NOT_FOUND" })).toBeNull();
    expect(winnerOf(undefined)).toBeNull();
  });
});
