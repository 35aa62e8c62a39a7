import { describe, expect, it } from "vitest";
import { contradicts, type LateEvidence } from "./contradicting-evidence.ts";
import type { IntentRecord } from "./intent-store.ts";
import type { ToolKind } from "./statuses.ts";

// DESIGN.md rule 16, one row per case: does evidence that arrived after a decision contradict it?

type Current = Pick<IntentRecord, "status" | "attempt" | "resolution" | "key" | "sentKey">;
const K = "k".repeat(32);
const K2 = "f".repeat(32);
const record = (over: Partial<Current>): Current => ({
  status: "SUCCEEDED",
  attempt: 1,
  resolution: null,
  key: K,
  sentKey: null,
  ...over,
});
const effect = (attempt: number, wireKey = K): LateEvidence => ({
  source: "late_answer",
  outcome: "SUCCEEDED",
  attempt,
  wireKey,
});
const refusal = (attempt: number): LateEvidence => ({
  source: "late_answer",
  outcome: "FAILED_NO_EFFECT",
  attempt,
  wireKey: K,
});

const rows: [string, Current, ToolKind | undefined, LateEvidence, boolean][] = [
  [
    "effect after a person's 'no effect', same attempt",
    record({ status: "FAILED_NO_EFFECT", resolution: "human_confirmed_no_effect" }),
    "unsafe",
    effect(1),
    true,
  ],
  [
    "effect after a refusal of a later attempt",
    record({ status: "FAILED_NO_EFFECT", attempt: 2 }),
    "idempotent_by_key",
    effect(1),
    true,
  ],
  ["effect of the very attempt that SUCCEEDED", record({}), "unsafe", effect(1), false],
  [
    "effect of attempt 1 beside attempt 2's SUCCEEDED, unsafe remote",
    record({ attempt: 2 }),
    "unsafe",
    effect(1),
    true,
  ],
  [
    "effect of attempt 1 beside attempt 2's SUCCEEDED, one key, deduplicating remote",
    record({ attempt: 2 }),
    "idempotent_by_key",
    effect(1),
    false,
  ],
  [
    "effect of attempt 1 beside attempt 2's SUCCEEDED under a fresh key",
    record({ attempt: 2, sentKey: K2 }),
    "idempotent_by_key",
    effect(1),
    true,
  ],
  ["effect beside a SUCCEEDED whose tool left the catalog", record({ attempt: 2 }), undefined, effect(1), true],
  ["refusal of the attempt a probe found", record({ resolution: "found" }), "idempotent_by_key", refusal(1), true],
  [
    "refusal of the attempt a person confirmed",
    record({ resolution: "human_confirmed_effect" }),
    "unsafe",
    refusal(1),
    true,
  ],
  [
    "refusal of an earlier attempt beside a resent SUCCEEDED",
    record({ attempt: 2, resolution: "absent_resent" }),
    "idempotent_by_key",
    refusal(1),
    false,
  ],
  ["refusal after a FAILED_NO_EFFECT", record({ status: "FAILED_NO_EFFECT" }), "unsafe", refusal(1), false],
  [
    "effect of the UNKNOWN attempt itself: it settles, no contradiction",
    record({ status: "UNKNOWN" }),
    "unsafe",
    effect(1),
    false,
  ],
  [
    "effect of attempt 1 beside an UNKNOWN attempt 2, unsafe remote",
    record({ status: "UNKNOWN", attempt: 2 }),
    "unsafe",
    effect(1),
    true,
  ],
  [
    "effect of attempt 1 beside an UNKNOWN same-key resend, deduplicating remote",
    record({ status: "UNKNOWN", attempt: 2 }),
    "idempotent_by_key",
    effect(1),
    false,
  ],
  [
    "anything against a PENDING record (a call in flight owns it)",
    record({ status: "PENDING", attempt: 2 }),
    "unsafe",
    effect(1),
    false,
  ],
];

describe("contradicts (rule 16)", () => {
  it.each(rows)("%s → %s", (_name, current, kind, evidence, expected) => {
    expect(contradicts(current, kind ? { kind } : undefined, evidence)).toBe(expected);
  });
});
