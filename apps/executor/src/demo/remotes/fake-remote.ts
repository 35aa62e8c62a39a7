import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import {
  DEMO_LAG_MS,
  type DemoFaultKind,
  type DemoFaultSettings,
  DemoFaultsError,
  demoFaultPicker,
  parseDemoFaults,
} from "./demo-faults.ts";
import { listenLoopback } from "./loopback-server.ts";

/**
 * A fake remote service over a real loopback socket, for fault injection in tests. It performs
 * "effects" (e.g. refunds) on `POST /effects`, optionally honours `Idempotency-Key` like Stripe and
 * the IETF idempotency-key draft (replay a key's response; 409 while the key's first request is in
 * flight; 422 when a key is reused with another body), and offers probes:
 * `GET /effects?clientRef=<key>` (key probe) and `GET /effects/search?<field>=<value>&since=<epoch ms>`
 * (identity probe). Faults are queued per POST and consumed in order; with `randomFaults` (the
 * `TRISTATE_DEMO_FAULTS` switch), a POST with no queued fault draws one at the switch's rates, and
 * `POST /__faults` with a switch value as its body (e.g. `on`, `off`, `lag=0.2`) changes the rates;
 * one carrying an `Origin` header (a browser's page) is refused with 403.
 */
export interface FakeRemoteOptions {
  /** The remote dedupes by `Idempotency-Key`. @default true */
  honorsKey?: boolean;
  /** How long the remote remembers keys, ms. @default 24 h */
  keyRetentionMs?: number;
  /** Time source for `since` filters and retention, epoch ms. @default Date.now */
  now?: () => number;
  /** Id of the n-th committed effect (1-based), e.g. `(n) => \`RF-${n}\``. @default `fx_<n>` */
  idFormat?: (n: number) => string;
  /** TCP port on 127.0.0.1. @default 0 (any free port) */
  port?: number;
  /** Random faults when no fault is queued (`TRISTATE_DEMO_FAULTS` / `_SEED`). @default none */
  randomFaults?: DemoFaultSettings;
}

/** What the remote does with one POST. */
export interface Fault {
  /** Perform the effect (before answering). @default true */
  commit?: boolean;
  /** Wait this long (ms) before committing. @default 0 */
  commitDelayMs?: number;
  /** The effect becomes visible to probes only this long (ms) after it is committed. @default 0 */
  visibleAfterMs?: number;
  /**
   * How to answer: `respond` (201 with the effect), `hang` (never answer; the client times out),
   * `reset` (destroy the socket with RST before any response byte), or an HTTP status.
   * @default "respond"
   */
  answer?: "respond" | "hang" | "reset" | number;
  /** Delay before answering, ms. @default 0 */
  respondDelayMs?: number;
  /** State of the committed effect as probes see it (e.g. `running`, `PREPARING`). @default "succeeded" */
  state?: string;
  /** Extra response headers for this answer (e.g. `{ "retry-after": "1" }` with a 429). */
  headers?: Record<string, string>;
  /**
   * The status the remote stores under the key for this request and replays to a same-key resend,
   * as Stripe does for a declined charge (a 402 beside a `failed` item): with `commit` and a failed
   * `state`, the item stays for probes and the key answers this status with `{ error, item }`.
   * @default 201 with the effect when it committed
   */
  storedStatus?: number;
  /**
   * Extra fields of the committed effect, in its answers and what probes find (e.g. a `note` holding
   * U+0000 or a lone surrogate, which JSON carries as `\u0000` / `\ud800`).
   */
  fields?: Record<string, unknown>;
}

/** One request the remote read completely (POSTs and probes), in arrival order. */
export interface SeenRequest {
  method: string;
  /** Path and query. */
  url: string;
  /** The client's port: equal ports mean the same (keep-alive) connection. */
  remotePort: number | undefined;
  /** `Idempotency-Key` header, or null. */
  key: string | null;
}

/** One committed effect. */
export interface FakeEffect {
  id: string;
  /** Extra fields its answers show ({@link Fault.fields}). */
  fields?: Record<string, unknown>;
  clientRef: string | null;
  body: Record<string, unknown>;
  /** Epoch ms it was committed. */
  committedAtEpochMs: number;
  /** Epoch ms from which probes see it. */
  visibleAtEpochMs: number;
  state: string;
}

/** A running fake remote. */
export interface FakeRemote {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /** Committed effects (the number that must be 1 in a "no duplicate" test). */
  readonly effects: FakeEffect[];
  /** Mutating requests that reached the remote (read completely). */
  posts: number;
  /** Read-only probe requests served. */
  probes: number;
  /** `Idempotency-Key` header values received, in order. */
  readonly keysSeen: string[];
  /** Request bodies received, in order. */
  readonly bodiesSeen: unknown[];
  /** `Request-Deadline` header values received. */
  readonly deadlinesSeen: string[];
  /** Every request read completely (POSTs and GETs), in arrival order. */
  readonly requests: SeenRequest[];
  /** Queues faults for the next POSTs. */
  fault(...faults: Fault[]): void;
  /** Answer probes with HTTP 503 while true. */
  probesFail: boolean;
  /** Random faults injected so far, by kind (`randomFaults`). */
  readonly injected: Partial<Record<DemoFaultKind, number>>;
  /** Stops the server and destroys open sockets. */
  close(): Promise<void>;
}

/** Starts a fake remote on 127.0.0.1 with a random port. */
export async function startFakeRemote(options: FakeRemoteOptions = {}): Promise<FakeRemote> {
  const honorsKey = options.honorsKey ?? true;
  const retention = options.keyRetentionMs ?? 24 * 3600_000;
  const now = options.now ?? Date.now;
  const idFormat = options.idFormat ?? ((n: number) => `fx_${n}`);
  const queue: Fault[] = [];
  const keys = new Map<
    string,
    { body: string; inFlight: boolean; response?: { status: number; body: unknown }; atEpochMs: number }
  >();
  let seq = 0;
  let pick = demoFaultPicker(options.randomFaults?.rates ?? {}, options.randomFaults?.seed ?? null);
  const drawFault = (): Fault | undefined => {
    const kind = pick();
    if (!kind) return undefined;
    remote.injected[kind] = (remote.injected[kind] ?? 0) + 1;
    return faultOf(kind);
  };

  const remote: Omit<FakeRemote, "url" | "close"> = {
    effects: [],
    posts: 0,
    probes: 0,
    keysSeen: [],
    bodiesSeen: [],
    deadlinesSeen: [],
    requests: [],
    probesFail: false,
    injected: {},
    fault: (...faults) => queue.push(...faults),
  };

  const send = (res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) => {
    if (body === undefined) {
      res.writeHead(status, headers).end();
      return;
    }
    res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
  };

  const handlePost = async (req: IncomingMessage, res: ServerResponse, raw: string) => {
    remote.posts++;
    const key = (req.headers["idempotency-key"] as string | undefined) ?? null;
    if (key) remote.keysSeen.push(key);
    const deadline = req.headers["request-deadline"];
    if (typeof deadline === "string") remote.deadlinesSeen.push(deadline);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw || "{}");
    } catch {
      return send(res, 400, { error: "body must be JSON" });
    }
    remote.bodiesSeen.push(body);
    if (honorsKey && key) {
      const prior = keys.get(key);
      if (prior && now() - prior.atEpochMs <= retention) {
        if (prior.body !== raw) return send(res, 422, { error: "idempotency key reused with a different request" });
        if (prior.inFlight) return send(res, 409, { error: "a request with this idempotency key is in progress" });
        if (prior.response) return send(res, prior.response.status, prior.response.body);
      }
      keys.set(key, { body: raw, inFlight: true, atEpochMs: now() });
    }
    const fault = queue.shift() ?? drawFault() ?? {};
    const commit = fault.commit ?? true;
    let effect: FakeEffect | undefined;
    if (fault.commitDelayMs) await sleep(fault.commitDelayMs);
    if (commit) {
      const at = now();
      effect = {
        id: idFormat(++seq),
        clientRef: key ?? (typeof body.clientRef === "string" ? body.clientRef : null),
        body,
        committedAtEpochMs: at,
        visibleAtEpochMs: at + (fault.visibleAfterMs ?? 0),
        state: fault.state ?? "succeeded",
        ...(fault.fields ? { fields: fault.fields } : {}),
      };
      remote.effects.push(effect);
    }
    const answer = fault.answer ?? "respond";
    const entry = key ? keys.get(key) : undefined;
    if (fault.respondDelayMs) await sleep(fault.respondDelayMs);
    if (answer === "hang") {
      // Never answer. The key stays "in flight" until the socket closes.
      req.socket.once("close", () => {
        if (entry) {
          entry.inFlight = false;
          if (effect) entry.response = storedAnswer(fault, effect);
          else keys.delete(key!);
        }
      });
      return;
    }
    if (answer === "reset") {
      if (entry) {
        entry.inFlight = false;
        if (effect) entry.response = storedAnswer(fault, effect);
        else keys.delete(key!);
      }
      req.socket.resetAndDestroy();
      return;
    }
    if (typeof answer === "number") {
      if (entry) {
        entry.inFlight = false;
        if (effect) entry.response = storedAnswer(fault, effect);
        else keys.delete(key!);
      }
      return send(res, answer, { error: `injected ${answer}` }, fault.headers);
    }
    if (!effect) {
      if (key) keys.delete(key);
      return send(res, 500, { error: "no effect" });
    }
    if (entry) {
      entry.inFlight = false;
      entry.response = storedAnswer(fault, effect);
    }
    const answered = storedAnswer(fault, effect);
    return send(res, answered.status, answered.body, fault.headers);
  };

  const handleGet = (url: URL, res: ServerResponse) => {
    remote.probes++;
    if (remote.probesFail) return send(res, 503, { error: "probe unavailable" });
    const t = now();
    const visible = remote.effects.filter((e) => e.visibleAtEpochMs <= t);
    if (url.pathname === "/effects") {
      const ref = url.searchParams.get("clientRef");
      return send(res, 200, visible.filter((e) => ref !== null && e.clientRef === ref).map(view));
    }
    if (url.pathname === "/effects/search") {
      const since = Number(url.searchParams.get("since") ?? "0");
      const matches = visible.filter(
        (e) =>
          e.committedAtEpochMs >= since &&
          [...url.searchParams.entries()].every(
            ([k, v]) => k === "since" || String(e.body[k] ?? "").toUpperCase() === v.toUpperCase(),
          ),
      );
      return send(res, 200, matches.map(view));
    }
    return send(res, 404, { error: "not found" });
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      remote.requests.push({
        method: req.method ?? "",
        url: req.url ?? "/",
        remotePort: req.socket.remotePort,
        key: (req.headers["idempotency-key"] as string | undefined) ?? null,
      });
      if (req.method === "POST" && url.pathname === "/__faults" && req.headers.origin !== undefined) {
        // A browser sends Origin with every cross-origin POST: no web page may switch the faults (curl sends none).
        send(res, 403, {
          error: "POST /__faults refused: the request carries an Origin header (a web page); use curl",
        });
      } else if (req.method === "POST" && url.pathname === "/__faults") {
        try {
          const rates = parseDemoFaults(Buffer.concat(chunks).toString("utf8"));
          pick = demoFaultPicker(rates, options.randomFaults?.seed ?? null);
          send(res, 200, { faults: rates });
        } catch (error) {
          if (!(error instanceof DemoFaultsError)) throw error;
          send(res, 400, { error: error.message });
        }
      } else if (req.method === "POST" && url.pathname === "/effects") {
        void handlePost(req, res, Buffer.concat(chunks).toString("utf8"));
      } else if (req.method === "GET") {
        handleGet(url, res);
      } else {
        send(res, 404, { error: "not found" });
      }
    });
  });
  const { url, close } = await listenLoopback(server, options.port ?? 0);
  return Object.assign(remote, { url, close }) as FakeRemote;
}

/** What the remote stores under the key for a committed request (and answers when it responds). */
function storedAnswer(fault: Fault, effect: FakeEffect): { status: number; body: unknown } {
  if (fault.storedStatus === undefined) return { status: 201, body: view(effect) };
  return { status: fault.storedStatus, body: { error: `declined (${effect.state})`, item: view(effect) } };
}

function view(e: FakeEffect): Record<string, unknown> {
  return { id: e.id, clientRef: e.clientRef, state: e.state, ...e.body, ...e.fields };
}

/** What the remote does for one kind of the fault switch (`TRISTATE_DEMO_FAULTS`). */
function faultOf(kind: DemoFaultKind): Fault {
  switch (kind) {
    case "timeout-after-commit":
      return { answer: "hang" };
    case "reset-before-commit":
      return { commit: false, answer: "reset" };
    case "reset-after-commit":
      return { answer: "reset" };
    case "504-after-commit":
      return { answer: 504 };
    case "lag":
      return { visibleAfterMs: DEMO_LAG_MS, answer: 504 };
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
