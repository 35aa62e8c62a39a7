/**
 * Real receivers for the notification tests (issue 23 §3): an HTTP receiver (node:http) for webhooks
 * and Slack's incoming-webhook format that records every request and answers from a programme, and a
 * real SMTP server (the `smtp-server` package) that records every message. All listen on loopback,
 * port 0 unless given, and close with their connections.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { AmbiguousError, canon, defineTool } from "@tristate/core";
import { SMTPServer } from "smtp-server";

/** One request a receiver got. */
export interface Arrival {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

/** An HTTP receiver: `answers` are used in turn for the first requests, then 200. */
export interface HttpReceiver {
  url: string;
  port: number;
  arrivals: Arrival[];
  /** Answers for the next requests (HTTP statuses), in order. */
  answers: number[];
  close(): Promise<void>;
}

/** Starts an HTTP receiver on `port` (0: any free one). */
export async function startHttpReceiver(port = 0): Promise<HttpReceiver> {
  const arrivals: Arrival[] = [];
  const answers: number[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const status = answers.shift() ?? 200;
      arrivals.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), status });
      res.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "ok" : "receiver failed");
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}/hook`,
    port: actual,
    arrivals,
    answers,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A receiver's signature check, written from the documented rule (not the service's code): the
 * header is `t=<epoch s>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>` and `t` is within 5 minutes.
 */
export function signatureValid(secret: string, header: string | undefined, body: string): boolean {
  const fields = Object.fromEntries((header ?? "").split(",").map((p) => p.split("=")));
  const expected = createHmac("sha256", secret).update(`${fields.t}.${body}`).digest();
  const given = Buffer.from(fields.v1 ?? "", "hex");
  const fresh = Math.abs(Date.now() / 1000 - Number(fields.t)) < 300;
  return fresh && given.length === expected.length && timingSafeEqual(given, expected);
}

/** A message the SMTP server accepted. */
export interface Mail {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server (no TLS, no auth) that keeps every message. */
export async function startSmtpServer(): Promise<{ url: string; mails: Mail[]; close(): Promise<void> }> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Polls `check` every 50 ms until it returns a value (not undefined/false) or `timeoutMs` passes. */
export async function eventually<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * `TRISTATE_NOTIFY_ALLOW_HOSTS` for tests whose receivers listen on loopback: the default (`*`) refuses
 * loopback addresses, so these hosts are listed exactly (docs/notifications.md "Where channels may point").
 */
export const LOOPBACK_RECEIVERS = "127.0.0.1,localhost";

/**
 * An unsafe tool whose remote never answers clearly and that has no probe: every call ends UNKNOWN and
 * waits for a person, so it raises `human_queue` — the event most notification tests follow.
 */
export const limbo = defineTool({
  name: "limbo",
  kind: "unsafe",
  identity: { id: canon.exact },
  timeoutMs: 2000,
  invoke: async () => {
    throw new AmbiguousError("the remote reset the connection after the request was written", {
      code: "RESET_AFTER_WRITE",
    });
  },
});

/**
 * The settings every notification test starts its service with — loopback receivers allowed
 * ({@link LOOPBACK_RECEIVERS}), a delivery round every 100 ms — plus the test's own.
 */
export function notifyEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { TRISTATE_NOTIFY_ALLOW_HOSTS: LOOPBACK_RECEIVERS, TRISTATE_NOTIFY_INTERVAL_MS: "100", ...extra };
}
