import { describe, expect, it } from "vitest";
import {
  parseRecordedCompensation,
  type RanCompensation,
  type RecordedCompensation,
  type RegisteredCompensation,
  recordedCompensationSchema,
} from "./compensation.ts";
import type { JsonValue } from "./json.ts";

const KEY = "0123456789abcdef0123456789abcdef";
const registered: RegisteredCompensation = { tool: "cancel_hotel", kind: "compensation", args: null };
const ran: RanCompensation = {
  tool: "cancel_hotel",
  kind: "compensation",
  args: { booking_ref: "HB-9" },
  key: "fedcba9876543210fedcba9876543210",
  status: "SUCCEEDED",
  needsHuman: false,
  atEpochMs: 1_750_000_000_000,
};

describe("the recorded compensation", () => {
  it("is JSON: a compensation is a JsonValue as stored", () => {
    const stored: JsonValue = ran satisfies RecordedCompensation;
    expect(JSON.parse(JSON.stringify(stored))).toEqual(ran);
  });

  it("parses both shapes as they are stored, unchanged", () => {
    expect(parseRecordedCompensation(registered, KEY)).toEqual(registered);
    expect(parseRecordedCompensation({ ...registered, kind: "corrective", args: ["a", 1] }, KEY)).toEqual({
      ...registered,
      kind: "corrective",
      args: ["a", 1],
    });
    expect(parseRecordedCompensation(ran, KEY)).toEqual(ran);
    expect(parseRecordedCompensation(null, KEY)).toBeNull();
    expect(parseRecordedCompensation(undefined, KEY)).toBeNull();
  });

  it.each([
    ["a string", "cancel_hotel"],
    ["no kind", { tool: "cancel_hotel", args: null }],
    ["an unknown kind", { ...registered, kind: "refund" }],
    ["no tool", { kind: "compensation", args: null }],
    ["an unknown field", { ...registered, note: "x" }],
    ["a run's key without its outcome", { ...registered, key: ran.key }],
    ["a run's status that is not an outcome", { ...ran, status: "PENDING" }],
  ])("refuses %s, naming the record's key", (_what, value) => {
    expect(recordedCompensationSchema.safeParse(value).success).toBe(false);
    expect(() => parseRecordedCompensation(value, KEY)).toThrow(
      new RegExp(`^intent record ${KEY}: the stored compensation is malformed: `),
    );
  });
});
