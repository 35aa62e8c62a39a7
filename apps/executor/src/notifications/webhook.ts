/**
 * The signed webhook (issue 23 §3), signed as Stripe signs its events: `Tristate-Signature:
 * t=<epoch s>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, and `Idempotency-Key: <delivery id>` for
 * the receiver to drop repeats. Sent with `callHttp`, so statuses classify as the HTTP tools' do
 * (2xx delivered; connection refused, 4xx: not delivered; timeout after sending, 5xx: UNKNOWN).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { callHttp, type InvokeContext } from "@tristate/core";
import type { Dispatcher } from "undici";

/** The signature header. */
const SIGNATURE_HEADER = "Tristate-Signature";

/** `t=<t>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>` for a body sent at `t` (epoch seconds). */
export function signatureHeader(secret: string, t: number, body: string): string {
  const v1 = createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");
  return `t=${t},v1=${v1}`;
}

/**
 * A receiver's check (what docs/notifications.md shows): the header's `v1` is the HMAC of `"<t>.<body>"`
 * under the channel's secret, and `t` is within `toleranceS` of now (replays of an old body refused).
 * @param body - the raw request body, exactly as received.
 * @param nowS - now, epoch seconds.
 */
export function verifySignature(secret: string, header: string, body: string, nowS: number, toleranceS = 300): boolean {
  const parts = new Map(header.split(",").map((p) => p.split("=", 2) as [string, string]));
  const t = Number(parts.get("t"));
  const v1 = Buffer.from(parts.get("v1") ?? "", "hex");
  const expected = Buffer.from(signatureHeader(secret, t, body).split("v1=")[1] ?? "", "hex");
  return (
    Number.isInteger(t) &&
    Math.abs(nowS - t) <= toleranceS &&
    v1.length === expected.length &&
    timingSafeEqual(v1, expected)
  );
}

/**
 * POSTs `body` to the channel's URL, signed now, through `dispatcher` when given (the host policy's,
 * which refuses a non-public address in its connections' own lookup).
 * @throws NotSentError / RejectedError / AmbiguousError as `callHttp` classifies the attempt.
 */
export async function postWebhook(
  send: { url: string; secret: string; deliveryId: string; body: string; dispatcher?: Dispatcher | undefined },
  ctx: Pick<InvokeContext, "signal" | "timeoutMs">,
): Promise<{ status: number }> {
  const t = Math.floor(Date.now() / 1000);
  const response = await callHttp(
    { signal: ctx.signal, timeoutMs: ctx.timeoutMs },
    {
      method: "POST",
      url: send.url,
      headers: {
        "content-type": "application/json",
        "user-agent": "Tristate-Notifications",
        [SIGNATURE_HEADER]: signatureHeader(send.secret, t, send.body),
        "Idempotency-Key": send.deliveryId,
      },
      body: send.body,
      ...(send.dispatcher ? { dispatcher: send.dispatcher } : {}),
    },
  );
  return { status: response.status };
}
