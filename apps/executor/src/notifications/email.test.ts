/**
 * How an e-mail notification's SMTP failures are classified (issue 23 §3), against a real SMTP server
 * (`smtp-server`): refused before the message data — not sent or rejected (FAILED_NO_EFFECT); no
 * final answer after the data was sent — UNKNOWN.
 */

import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { isAmbiguousError, isNotSentError, isRejectedError } from "@tristate/core";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import { afterEach, describe, expect, it } from "vitest";
import { messageIdOf, sendEmail } from "./email.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function smtp(options: Partial<SMTPServerOptions>): Promise<string> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    ...options,
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

const mail = { deliveryId: "ndl_test1", to: ["ops@example.test"], subject: "s", text: "t" };
const from = "Tristate <alerts@tristate.test>";
const ctx = () => ({ signal: new AbortController().signal, timeoutMs: 5000 });
const send = (smtpUrl: string) => sendEmail({ smtpUrl, from }, mail, ctx());

describe("sendEmail", () => {
  it("sends with the Message-ID derived from the delivery id", async () => {
    let raw = "";
    const url = await smtp({
      onData(stream, _session, callback) {
        stream.on("data", (c: Buffer) => {
          raw += c.toString();
        });
        stream.on("end", () => callback());
      },
    });
    const sent = await send(url);
    expect(sent.messageId).toBe("<ndl_test1@tristate.test>");
    expect(raw).toMatch(/^Message-ID: <ndl_test1@tristate\.test>$/im);
    expect(messageIdOf("ndl_x", "plain@host.example")).toBe("<ndl_x@host.example>");
  });

  it("connection refused: not sent", async () => {
    const error = await send(`smtp://127.0.0.1:${await closedPort()}`).catch((e: unknown) => e);
    expect(isNotSentError(error)).toBe(true);
  });

  it("without TRISTATE_SMTP_URL: not sent, naming the setting", async () => {
    const error = await sendEmail({ smtpUrl: undefined, from }, mail, ctx()).catch((e: unknown) => e);
    expect(isNotSentError(error)).toBe(true);
    expect((error as Error).message).toContain("TRISTATE_SMTP_URL");
  });

  it("a recipient refused (550 at RCPT TO, before DATA): rejected", async () => {
    const url = await smtp({
      onRcptTo(_address, _session, callback) {
        callback(Object.assign(new Error("no such mailbox"), { responseCode: 550 }));
      },
    });
    const error = await send(url).catch((e: unknown) => e);
    expect(isRejectedError(error)).toBe(true);
  });

  it("the message refused by the final answer (554 after the data): rejected", async () => {
    const url = await smtp({
      onData(stream, _session, callback) {
        stream.resume();
        stream.on("end", () => callback(Object.assign(new Error("spam"), { responseCode: 554 })));
      },
    });
    const error = await send(url).catch((e: unknown) => e);
    expect(isRejectedError(error)).toBe(true);
  });

  it("no final answer after the data was sent (the server took it and went silent): UNKNOWN", async () => {
    const url = await smtp({
      onData(stream) {
        // The data is read; the final 250 (or refusal) never comes: the client's socket timeout ends it.
        stream.resume();
      },
    });
    const error = await sendEmail({ smtpUrl: url, from }, mail, {
      signal: new AbortController().signal,
      timeoutMs: 1000,
    }).catch((e: unknown) => e);
    expect(isAmbiguousError(error), String(error)).toBe(true);
  });
});
