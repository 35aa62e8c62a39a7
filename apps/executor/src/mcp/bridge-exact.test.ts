/**
 * `tristate mcp`'s bridge refuses a stdin message holding a number JSON cannot hold exactly before
 * forwarding it (bridge-exact.ts): the line check alone, and the bridge in process against a counting
 * HTTP server standing in for the service — the refused messages never reach it, an exact one does.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runMcpBridge } from "./bridge.ts";
import { exactLines, refuseInexactLine } from "./bridge-exact.ts";

const call = (id: number | string, args: string) =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call","params":{"name":"issue_refund","arguments":${args}}}`;
const rule = (text: string, read: string) =>
  `must be a number JSON holds exactly (${text} would be read as ${read}): send it as a string to a field declared to take one`;

describe("refuseInexactLine", () => {
  it("names the field and the rule, with the request's id, as HTTP /mcp words it (-32602)", () => {
    const refusal = refuseInexactLine(call(7, `{"order_id":"A-1","amount":9007199254740993}`));
    expect(refusal).toStrictEqual({
      field: "params.arguments.amount",
      request: true,
      answer: {
        jsonrpc: "2.0",
        id: 7,
        error: {
          code: -32602,
          message: `params.arguments.amount: ${rule("9007199254740993", "9007199254740992")}`,
          data: { field: "params.arguments.amount" },
        },
      },
    });
    const decimal = refuseInexactLine(call("x", `{"lines":[{"amount":0.1000000000000000055511151231257827}]}`));
    expect(decimal?.field).toBe("params.arguments.lines.0.amount");
    expect(decimal?.answer).toMatchObject({
      id: "x",
      error: { message: expect.stringContaining("would be read as 0.1)") },
    });
  });

  it("lets exact numbers, long strings and non-JSON through; a notification gets no answer", () => {
    expect(refuseInexactLine(call(1, `{"amount":9007199254740991,"ref":"12345678901234567890"}`))).toBeNull();
    expect(refuseInexactLine(call(1, `{"amount":0.1,"qty":-3,"rate":2.5e-3}`))).toBeNull();
    expect(refuseInexactLine("not json 12345678901234567890")).toBeNull();
    const note = refuseInexactLine(`{"jsonrpc":"2.0","method":"notifications/x","params":{"n":12345678901234567890}}`);
    expect(note).toMatchObject({ field: "params.n", request: false });
  });
});

describe("exactLines", () => {
  it("passes lines on byte for byte, split anywhere (a character cut in two, CRLF), and holds back the refused", async () => {
    const refused: string[] = [];
    const lines = exactLines((r) => refused.push(r.field));
    let out = "";
    lines.on("data", (c: Buffer) => {
      out += c.toString();
    });
    const kept = `${call(1, `{"note":"café ☕","amount":12.5}`)}\r\n`;
    const bad = `${call(2, `{"amount":9007199254740993}`)}\n`;
    const bytes = Buffer.from(kept + bad + kept);
    const cut = bytes.indexOf(Buffer.from("☕")) + 1; // inside the character's three bytes
    lines.write(bytes.subarray(0, cut));
    lines.write(bytes.subarray(cut, kept.length + 10));
    lines.end(bytes.subarray(kept.length + 10));
    await once(lines, "end");
    expect(out).toBe(kept + kept);
    expect(refused).toStrictEqual(["params.arguments.amount"]);
  });
});

describe("the bridge in process", () => {
  let server: Server;
  const seen: string[] = [];
  beforeAll(async () => {
    // Stands in for the service: counts what reaches it and refuses it (503), so an exact message is answered.
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => {
        seen.push(`${req.method} ${body}`);
        res.writeHead(503, { "content-type": "text/plain" }).end("busy");
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("answers an inexact number -32602 with the agent's id and sends nothing; an exact call is forwarded", async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const answers: Record<string, unknown>[] = [];
    let buffered = "";
    stdout.on("data", (c: Buffer) => {
      buffered += c.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) answers.push(JSON.parse(line));
    });
    const endpoint = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
    const options = { endpoint, secret: "k", defaultBudgetMs: 2000, maxBudgetMs: 2000, logLevel: "silent" };
    const done = runMcpBridge(options, { env: {}, stdin, stdout, err: () => {} });
    const waitFor = async (n: number) => {
      for (let i = 0; i < 100 && answers.length < n; i++) await new Promise((r) => setTimeout(r, 50));
      expect(answers.length).toBeGreaterThanOrEqual(n);
    };

    stdin.write(`${call(7, `{"order_id":"A-1","amount":9007199254740993}`)}\n`);
    stdin.write(`${call(8, `{"amount":0.1000000000000000055511151231257827}`)}\n`);
    await waitFor(2);
    expect(answers).toStrictEqual([
      {
        jsonrpc: "2.0",
        id: 7,
        error: {
          code: -32602,
          message: `params.arguments.amount: ${rule("9007199254740993", "9007199254740992")}`,
          data: { field: "params.arguments.amount" },
        },
      },
      expect.objectContaining({ id: 8, error: expect.objectContaining({ code: -32602 }) }),
    ]);
    expect(seen).toStrictEqual([]);

    // The same call with an amount JSON holds exactly goes to the service (here refused with 503).
    stdin.write(`${call(9, `{"order_id":"A-1","amount":9007199254740991}`)}\n`);
    await waitFor(3);
    expect(answers[2]).toMatchObject({ id: 9 });
    expect(answers[2]?.error).not.toMatchObject({ code: -32602 });
    expect(seen.some((s) => s.startsWith("POST "))).toBe(true);
    expect(seen.join("\n")).not.toContain("9007199254740992");
    stdin.end();
    expect(await done).toBe(0);
  });
});
