/** The delivery loop's retry schedule and the webhook signature (issue 23 §3). */
import { describe, expect, it } from "vitest";
import {
  FIRST_RETRY_DELAY_MS,
  givesUp,
  MAX_DELIVERY_ATTEMPTS,
  MAX_RETRY_DELAY_MS,
  retryDelayMs,
} from "./delivery-loop.ts";
import { signatureHeader, verifySignature } from "./webhook.ts";

describe("retryDelayMs", () => {
  it("doubles from 2 s, capped at 10 min, jittered to 0.5–1 of that, never before Retry-After", () => {
    expect(retryDelayMs(1, 0, () => 1)).toBe(FIRST_RETRY_DELAY_MS);
    expect(retryDelayMs(1, 0, () => 0)).toBe(FIRST_RETRY_DELAY_MS / 2);
    expect(retryDelayMs(4, 0, () => 1)).toBe(8 * FIRST_RETRY_DELAY_MS);
    expect(retryDelayMs(30, 0, () => 1)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(1, 45_000, () => 1)).toBe(45_000);
  });
});

describe("the webhook signature", () => {
  it("is HMAC-SHA256 of '<t>.<body>', checked within the tolerance", () => {
    const header = signatureHeader("whsec_k", 1_767_225_600, '{"id":"ndl_1"}');
    // printf '%s' '1767225600.{"id":"ndl_1"}' | openssl dgst -sha256 -hmac whsec_k
    expect(header).toBe("t=1767225600,v1=1175324288effa4da04b0f1c5cbb62374f036fecb9289965ec375c0c0342b433");
    expect(verifySignature("whsec_k", header, '{"id":"ndl_1"}', 1_767_225_600)).toBe(true);
    expect(verifySignature("whsec_k", header, '{"id":"ndl_2"}', 1_767_225_600)).toBe(false);
    expect(verifySignature("whsec_other", header, '{"id":"ndl_1"}', 1_767_225_600)).toBe(false);
    expect(verifySignature("whsec_k", header, '{"id":"ndl_1"}', 1_767_225_600 + 301)).toBe(false);
  });
});

describe("givesUp", () => {
  it("after the last attempt: not delivered (any kind) or a webhook still UNKNOWN (3xx/5xx for ever); Slack/e-mail UNKNOWN waits for a person", () => {
    const last = MAX_DELIVERY_ATTEMPTS;
    expect(givesUp("FAILED_NO_EFFECT", "webhook", last - 1)).toBe(false);
    expect(givesUp("UNKNOWN", "webhook", last - 1)).toBe(false);
    for (const kind of ["webhook", "slack", "email"] as const)
      expect(givesUp("FAILED_NO_EFFECT", kind, last)).toBe(true);
    expect(givesUp("UNKNOWN", "webhook", last)).toBe(true);
    expect(givesUp("UNKNOWN", "slack", last + 5)).toBe(false);
    expect(givesUp("UNKNOWN", "email", last + 5)).toBe(false);
    expect(givesUp("SUCCEEDED", "webhook", last)).toBe(false);
  });
});
