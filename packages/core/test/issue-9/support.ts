/**
 * Shared helpers for the issue 9 regression tests (sections 6, 7 and 8): a Stripe-style card
 * remote that caches every answer under its `Idempotency-Key`, a free port, sleeps and polls.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { listenLoopback } from "@tristate/testing";

/** Resolves after `ms` of real time. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `predicate` every 2 ms until it holds; throws after `timeoutMs`. */
export async function waitFor(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = performance.now();
  while (!predicate()) {
    if (performance.now() - start > timeoutMs) throw new Error("waitFor: condition not met in time");
    await sleep(2);
  }
}

/** A TCP port on 127.0.0.1 with no listener (bound, then released): connecting is refused. */
export async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** One charge the card remote made. */
export interface Charge {
  id: string;
  key: string;
  body: Record<string, unknown>;
}

/**
 * A card-charging remote over a real loopback socket that behaves like Stripe's idempotency layer:
 * `POST /charges` stores the answer it gave under the request's `Idempotency-Key` — a 402 decline
 * as well as a 201 charge — and replays it for a repeat of that key with the same body (header
 * `Idempotent-Replayed: true`); a repeat with another body is refused 400 `idempotency_error`.
 * Rate limiting happens before the request executes, so a 429 is never stored (Stripe: "results
 * are only saved if an API endpoint started executing"). `GET /charges?clientRef=<key>` lists the
 * charges made under a key (the key probe).
 */
export interface CardRemote {
  readonly url: string;
  /** `POST /charges` requests that reached the remote (read completely). */
  posts: number;
  /** `Idempotency-Key` of every POST, in order. */
  readonly keysSeen: string[];
  /** Parsed body of every POST, in order. */
  readonly bodiesSeen: Record<string, unknown>[];
  /** Charges made (the number that must be 1). */
  readonly charges: Charge[];
  /** Answers of the key store that were replays, in order (status codes). */
  readonly replays: number[];
  /** `payment_method` values the card network declines (402 `card_declined`). */
  readonly declined: Set<string>;
  /** Answer the next N POSTs 429 before executing (not stored under the key). */
  rateLimitNext: number;
  /** Execute the next N POSTs (charge made, answer stored) but reset the connection instead of answering. */
  resetNext: number;
  /** Lookups served (`GET /charges?clientRef=<key>`). */
  probes: number;
  /** Answer lookups 503 while true. */
  probesFail: boolean;
  close(): Promise<void>;
}

/** Starts the card remote on 127.0.0.1 (any free port). */
export async function startCardRemote(declined: string[] = []): Promise<CardRemote> {
  const stored = new Map<string, { raw: string; status: number; body: unknown }>();
  const state: Omit<CardRemote, "url" | "close"> = {
    posts: 0,
    keysSeen: [],
    bodiesSeen: [],
    charges: [],
    replays: [],
    declined: new Set(declined),
    rateLimitNext: 0,
    resetNext: 0,
    probes: 0,
    probesFail: false,
  };
  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method === "GET" && url.pathname === "/charges") {
      state.probes++;
      if (state.probesFail) return send(res, 503, { error: "lookup unavailable" });
      const ref = url.searchParams.get("clientRef");
      return send(
        res,
        200,
        state.charges.filter((c) => c.key === ref).map((c) => ({ id: c.id, clientRef: c.key, ...c.body })),
      );
    }
    if (req.method !== "POST" || url.pathname !== "/charges") return send(res, 404, { error: "not found" });
    state.posts++;
    const key = (req.headers["idempotency-key"] as string | undefined) ?? "";
    state.keysSeen.push(key);
    const body = JSON.parse(raw || "{}") as Record<string, unknown>;
    state.bodiesSeen.push(body);
    if (state.rateLimitNext > 0) {
      state.rateLimitNext--;
      return send(res, 429, { error: { type: "rate_limit_error" } });
    }
    const prior = key ? stored.get(key) : undefined;
    if (prior) {
      if (prior.raw !== raw) {
        return send(res, 400, {
          error: {
            type: "idempotency_error",
            message:
              "Keys for idempotent requests can only be used with the same parameters they were first used with.",
          },
        });
      }
      state.replays.push(prior.status);
      return send(res, prior.status, prior.body, { "idempotent-replayed": "true" });
    }
    let status: number;
    let answer: unknown;
    if (state.declined.has(String(body.payment_method))) {
      status = 402;
      answer = { error: { type: "card_error", code: "card_declined", message: "Your card was declined." } };
    } else {
      const charge: Charge = { id: `ch_${state.charges.length + 1}`, key, body };
      state.charges.push(charge);
      status = 201;
      answer = { id: charge.id, status: "succeeded", ...body };
    }
    if (key) stored.set(key, { raw, status, body: answer });
    if (state.resetNext > 0) {
      state.resetNext--;
      req.socket.resetAndDestroy();
      return;
    }
    return send(res, status, answer);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  const { url, close } = await listenLoopback(server);
  return Object.assign(state, { url, close }) as CardRemote;
}
