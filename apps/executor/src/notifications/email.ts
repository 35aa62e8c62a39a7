/**
 * E-mail notifications over SMTP with nodemailer (issue 23 §3). The Message-ID is derived from the
 * delivery id (`<ndl_…@host>`), so every attempt of a delivery carries the same one. SMTP errors are
 * classified by how far the transaction got:
 * - connection refused, DNS, TLS, greeting or authentication failures, or a refusal of MAIL FROM /
 *   RCPT TO / DATA (4xx or 5xx) — before the message data was sent: not sent (FAILED_NO_EFFECT);
 * - the server's final answer to the data refusing it (4xx/5xx): refused (FAILED_NO_EFFECT);
 * - anything else once the `DATA` command was written (a reset, a timeout before the final 250):
 *   UNKNOWN — the server may have taken the message.
 */
import { AmbiguousError, type InvokeContext, NotSentError, RejectedError } from "@tristate/core";
import nodemailer from "nodemailer";

/** What an SMTP error carries (nodemailer's `code`, `command`, `responseCode`). */
interface SmtpError extends Error {
  code?: string;
  command?: string;
  responseCode?: number;
  response?: string;
}

/** The Message-ID of a delivery: `<delivery id@domain of the sender>`. */
export function messageIdOf(deliveryId: string, from: string): string {
  const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? "tristate.local";
  return `<${deliveryId}@${domain}>`;
}

/**
 * The classified error of a failed send.
 * @param dataSent - whether the client had written the `DATA` command when it failed.
 */
export function classifySmtpError(error: SmtpError, dataSent: boolean): Error {
  const what = `SMTP ${error.command ?? "send"} failed: ${error.response ?? error.message}`;
  const httpStatus = undefined;
  if (error.code === "EENVELOPE") return new RejectedError(what, { code: "REJECTED", cause: error, httpStatus });
  if (error.code === "EMESSAGE" && error.responseCode !== undefined && error.responseCode >= 400) {
    return new RejectedError(what, { code: "REJECTED", cause: error });
  }
  if (!dataSent) return new NotSentError(what, { code: "NOT_SENT", cause: error });
  return new AmbiguousError(`${what} (after the message data was sent, before the server's final 250)`, {
    code: "AMBIGUOUS",
    cause: error,
  });
}

/**
 * Sends one e-mail and waits for the server's final answer.
 * @returns the server's answer (`250 …`) and the Message-ID.
 * @throws NotSentError without `TRISTATE_SMTP_URL`, else NotSentError / RejectedError / AmbiguousError
 *   by {@link classifySmtpError}; AmbiguousError `READ_TIMEOUT` when the call's signal fires after DATA.
 */
export async function sendEmail(
  smtp: { smtpUrl: string | undefined; from: string },
  mail: { deliveryId: string; to: string[]; subject: string; text: string },
  ctx: Pick<InvokeContext, "signal" | "timeoutMs">,
): Promise<{ response: string; messageId: string }> {
  if (!smtp.smtpUrl) {
    throw new NotSentError("e-mail notifications need TRISTATE_SMTP_URL (the SMTP server to send through)");
  }
  let dataSent = false;
  const watch = (entry: { tnx?: string }, message: unknown) => {
    if (entry?.tnx === "client" && typeof message === "string" && message.trim().toUpperCase() === "DATA")
      dataSent = true;
  };
  const quiet = () => {};
  const timeoutMs = Math.max(1_000, Math.floor(ctx.timeoutMs));
  const transport = nodemailer.createTransport({
    url: smtp.smtpUrl,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    transactionLog: true,
    logger: { trace: quiet, debug: watch, info: quiet, warn: quiet, error: quiet, fatal: quiet, level: quiet },
  } as Parameters<typeof nodemailer.createTransport>[0]);
  const messageId = messageIdOf(mail.deliveryId, smtp.from);
  const onAbort = () => transport.close();
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const info = await transport.sendMail({
      from: smtp.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      messageId,
      headers: { "X-Tristate-Delivery": mail.deliveryId },
    });
    return { response: String(info.response ?? ""), messageId };
  } catch (error) {
    if (ctx.signal.aborted && dataSent) {
      throw new AmbiguousError("SMTP send timed out after the message data was sent", {
        code: "READ_TIMEOUT",
        cause: error,
      });
    }
    throw classifySmtpError(error as SmtpError, dataSent);
  } finally {
    ctx.signal.removeEventListener("abort", onAbort);
    transport.close();
  }
}
