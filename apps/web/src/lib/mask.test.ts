import { describe, expect, it } from "vitest";
import { MASK, maskSecrets } from "./mask.ts";

describe("maskSecrets", () => {
  it("masks secret-looking fields at any depth and keeps the rest", () => {
    expect(
      maskSecrets({ order_id: "A-1", card_number: "4111", nested: [{ apiToken: "x", amount: 3 }], password: null }),
    ).toEqual({ order_id: "A-1", card_number: MASK, nested: [{ apiToken: MASK, amount: 3 }], password: null });
  });
});
