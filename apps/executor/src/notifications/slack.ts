/**
 * A Slack incoming webhook (issue 23 §3): `POST <url>` with `{ text, blocks }` (Slack's message
 * format; `text` is the notification's fallback). Slack answers `200 ok`; its errors are 4xx with a
 * reason text (`invalid_payload`, `no_service`, …): not posted. A timeout or 5xx after sending is
 * UNKNOWN (the message may be in the channel); the tool is `unsafe`, so it is never resent blindly.
 */
import { callHttp, type InvokeContext } from "@tristate/core";
import type { Dispatcher } from "undici";
import type { SlackMessage } from "./render.ts";

/**
 * Posts the message, through `dispatcher` when given (the host policy's: see webhook.ts).
 * @throws NotSentError / RejectedError / AmbiguousError as `callHttp` classifies the attempt.
 */
export async function postSlack(
  send: { url: string; message: SlackMessage; dispatcher?: Dispatcher | undefined },
  ctx: Pick<InvokeContext, "signal" | "timeoutMs">,
): Promise<{ status: number }> {
  const response = await callHttp(
    { signal: ctx.signal, timeoutMs: ctx.timeoutMs },
    {
      method: "POST",
      url: send.url,
      headers: { "user-agent": "Tristate-Notifications" },
      body: send.message,
      ...(send.dispatcher ? { dispatcher: send.dispatcher } : {}),
    },
  );
  return { status: response.status };
}
