/**
 * The last check before a transport sends (issue 21 §1): after every wait of a tool's own (host
 * policy's DNS look-up, connecting and initialising an MCP upstream session), the call's time may
 * be gone. Nothing is ever sent after that: the call ends FAILED_NO_EFFECT, nothing sent.
 */
import { type Deadline, NotSentError } from "@tristate/core";

/**
 * Throws when the call may no longer send: its `signal` aborted (the per-call timeout, which the
 * executor caps at the deadline minus the reserve) or its `deadline` reached. Call it right before
 * the bytes go out.
 * @param where the tool and request, for the message (e.g. `refund: POST /refunds`).
 * @throws NotSentError `DEADLINE_EXCEEDED` (nothing was sent).
 */
export function refuseSendWhenTimeGone(call: { signal: AbortSignal; deadline?: Deadline | undefined }, where: string) {
  const expired = call.deadline?.expired() ?? false;
  if (!call.signal.aborted && !expired) return;
  throw new NotSentError(
    `${where}: not sent — the call's ${expired ? "deadline passed" : "time ran out"} before the request could go out`,
    { code: "DEADLINE_EXCEEDED" },
  );
}
