/**
 * The `answers` rules of declarative HTTP tools (issue 9 §7b): which 2xx answers mean "no effect",
 * "partial" or (for a 207) "done"; a 207 nobody reads is never "done". End to end through the
 * executor against a loopback batch-notification remote.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createExecutor, Deadline, MemoryIntentStore } from "@tristate/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildCatalog, CatalogError } from "../src/catalog/load.ts";

/** One programmed answer: its status and, per recipient, whether the remote sent that notification. */
interface Answer {
  status: number;
  body: (sent: boolean[]) => unknown;
  sent: boolean[];
}

/** The remote: `POST /notify` answers the next programmed answer and keeps the notifications it sent. */
let server: Server;
let base: string;
let queue: Answer[] = [];
let posts = 0;
const delivered: string[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      posts++;
      const answer = queue.shift() ?? { status: 200, body: () => ({ result: "ok" }), sent: [true] };
      answer.sent.forEach((sent, i) => {
        if (sent) delivered.push(`${posts}.${i}`);
      });
      res.writeHead(answer.status, { "content-type": "application/json" });
      res.end(JSON.stringify(answer.body(answer.sent)));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  queue = [];
  posts = 0;
  delivered.length = 0;
});

/** A 207 body: one result per recipient, `sent` or `failed`. */
const multiStatus = (sent: boolean[]) => ({
  results: sent.map((s, i) => ({ to: `r${i}`, status: s ? "sent" : "failed" })),
});

const notifyDecl = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: "notify",
  kind: "unsafe",
  method: "POST",
  url: `${base}/notify`,
  args: [
    { name: "campaign", type: "string" },
    { name: "segment", type: "string" },
  ],
  identity: { campaign: "exact", segment: "exact" },
  timeoutMs: 1500,
  answers: [
    { status: 207, every: { path: "results", field: "status", equals: ["failed", "rejected"] }, means: "no_effect" },
    { status: 207, every: { path: "results", field: "status", equals: "sent" }, means: "done" },
    { path: "result", equals: ["duplicate_ignored", "noop"], means: "no_effect" },
    { some: { path: "results", field: "status", equals: "failed" }, means: "partial" },
  ],
  ...over,
});

let step = 0;
async function call(declaration: Record<string, unknown>, answer?: Answer) {
  if (answer) queue.push(answer);
  const store = new MemoryIntentStore();
  const tools = await buildCatalog({ httpTools: [declaration] });
  const ex = createExecutor({ store, tools, probe: { attempts: 2, spacingMs: 0, timeoutMs: 2000 } });
  const envelope = await ex.call({
    runId: "run-answers",
    stepId: `step-${++step}`,
    tool: declaration.name as string,
    args: { campaign: "spring", segment: "eu" },
    deadline: Deadline.after(20_000),
  });
  const events = await store.listEvents(envelope.idempotency_key!);
  const outcome = events.find((e) => e.type === "outcome")?.data;
  return { envelope, outcome };
}

describe("answers rules read 2xx answers", () => {
  it("a 207 whose every item failed → FAILED_NO_EFFECT (REJECTED, the rule named), nothing at the remote, nothing resent", async () => {
    const { envelope } = await call(notifyDecl(), { status: 207, body: multiStatus, sent: [false, false] });
    expect(envelope).toMatchObject({
      status: "FAILED_NO_EFFECT",
      retry_safe: true,
      error: { code: "REJECTED", httpStatus: 207 },
    });
    expect(envelope.error?.message).toContain(
      `notify: POST ${base}/notify → HTTP 207: answers.0 (status 207; every results.*.status = "failed" or "rejected")`,
    );
    expect(delivered).toEqual([]);
    expect(posts).toBe(1);
  });

  it("a 207 with sent and failed items → UNKNOWN with PARTIAL_EFFECT; nothing is resent", async () => {
    const { envelope, outcome } = await call(notifyDecl(), { status: 207, body: multiStatus, sent: [true, false] });
    expect(envelope).toMatchObject({ status: "UNKNOWN", retry_safe: false });
    expect(outcome).toMatchObject({ outcome: "UNKNOWN", code: "PARTIAL_EFFECT" });
    expect(delivered).toEqual(["1.0"]);
    expect(posts).toBe(1);
  });

  it("a 207 that no rule reads is partial, never done (a tool without answers rules too)", async () => {
    const other = await call(notifyDecl({ answers: [{ path: "result", equals: "noop", means: "no_effect" }] }), {
      status: 207,
      body: multiStatus,
      sent: [true, true],
    });
    expect(other.envelope.status).toBe("UNKNOWN");
    expect(other.outcome).toMatchObject({ code: "PARTIAL_EFFECT" });
    const none = await call(notifyDecl({ answers: undefined }), { status: 207, body: multiStatus, sent: [true] });
    expect(none.envelope.status).toBe("UNKNOWN");
    expect(none.outcome).toMatchObject({ code: "PARTIAL_EFFECT" });
  });

  it('a 207 whose every item was sent matches a "done" rule → SUCCEEDED', async () => {
    const { envelope } = await call(notifyDecl(), { status: 207, body: multiStatus, sent: [true, true] });
    expect(envelope).toMatchObject({ status: "SUCCEEDED", result: multiStatus([true, true]) });
  });

  it("body field rules: a 200 saying it did nothing → FAILED_NO_EFFECT; a 200 with failed items → UNKNOWN; others done", async () => {
    const noop = await call(notifyDecl(), { status: 200, body: () => ({ result: "duplicate_ignored" }), sent: [] });
    expect(noop.envelope).toMatchObject({ status: "FAILED_NO_EFFECT", error: { code: "REJECTED", httpStatus: 200 } });
    expect(noop.envelope.error?.message).toContain('answers.2 (result = "duplicate_ignored" or "noop")');

    const some = await call(notifyDecl(), { status: 200, body: multiStatus, sent: [true, false, true] });
    expect(some.envelope.status).toBe("UNKNOWN");
    expect(some.outcome).toMatchObject({ code: "PARTIAL_EFFECT" });

    const ok = await call(notifyDecl(), { status: 200, body: multiStatus, sent: [true, true] });
    expect(ok.envelope.status).toBe("SUCCEEDED");
    expect(posts).toBe(3);
  });

  it("an empty results list matches no every rule: a 207 with nothing in it is still partial", async () => {
    const { envelope } = await call(notifyDecl(), { status: 207, body: multiStatus, sent: [] });
    expect(envelope.status).toBe("UNKNOWN");
  });
});

describe("invalid answers rules fail with the tool, field and rule named", () => {
  const fails = async (answers: unknown, message: string) => {
    const error = await buildCatalog({ httpTools: [notifyDecl({ answers })] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CatalogError);
    expect((error as Error).message).toBe(`catalog: tool "notify": ${message}`);
  };

  it("statuses, conditions, means", async () => {
    await fails(
      [{ status: 404, means: "no_effect" }],
      "answers.0.status: must be a 2xx status or a non-empty list of them (other statuses never reach the answers rules)",
    );
    await fails([{ means: "partial" }], "answers.0: must test something: status, path with equals, every or some");
    await fails(
      [
        { status: 200, path: "result", equals: "noop", means: "no_effect" },
        { path: "result", means: "no_effect" },
      ],
      "answers.1.equals: is required with path",
    );
    // "no effect" must be shown by the body, item by item — never by a status or some items alone.
    await fails(
      [{ status: 207, means: "no_effect" }],
      'answers.0.means: "no_effect" needs a body test (path with equals, or every): a status alone cannot show that no part took effect',
    );
    await fails(
      [{ status: 207, some: { path: "results", field: "status", equals: "failed" }, means: "no_effect" }],
      'answers.0.means: "no_effect" needs a body test (path with equals, or every): a status alone cannot show that no part took effect',
    );
    await fails([{ equals: "noop", means: "no_effect" }], "answers.0.path: is required with equals");
    await fails(
      [{ status: 207, means: "done" }],
      'answers.0.means: "done" needs a body test (path with equals, or every): a status alone cannot show every part succeeded',
    );
    await fails(
      [{ status: 207, means: "ok" }],
      'answers.0.means: Invalid option: expected one of "done"|"no_effect"|"partial"',
    );
    await fails(
      [{ status: 207, when: "x", means: "partial" }],
      "answers.0.when: unknown field; allowed fields: status, path, equals, every, some, means",
    );
  });

  it("paths and item tests", async () => {
    await fails(
      [{ path: "a..b", equals: 1, means: "partial" }],
      "answers.0.path: must be a dot path such as results or data.0.state",
    );
    await fails([{ every: { path: "results", equals: "x" }, means: "partial" }], "answers.0.every.field: is required");
    await fails(
      [{ some: { field: "status", equals: [] }, means: "partial" }],
      "answers.0.some.equals: must be a string, number, boolean or null, or a non-empty list of them",
    );
  });
});
