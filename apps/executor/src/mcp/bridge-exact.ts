/**
 * `tristate mcp`'s bridge reads stdin with the SDK's `StdioServerTransport`, which parses each line
 * with `JSON.parse`: a number JSON cannot hold exactly (`9007199254740993`, `0.1000000000000000055511151231257827`)
 * would reach the service already rounded, and pass its exact-number check (request-body.ts). So
 * each line is read exactly first (`parseExactJson`, lossless-json), and a message holding such a
 * number is answered here and never forwarded: the JSON-RPC error HTTP `/mcp` answers for it
 * (-32602, the field's path and the rule; request-checks.ts), with the agent's request id. HTTP
 * lets such a number into a tool argument declared to take it as a string; over stdio it must be
 * sent as a string (the rule says so), since the bridge holds no catalog.
 */
import { Transform, type TransformCallback } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { ErrorCode, type JSONRPCMessage, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { BodyRefusal, inexactNumberRule, parseExactJson } from "../request-body.ts";

/** A stdin line refused before it was forwarded: the answer for the agent, if the line was a request. */
export interface LineRefusal {
  /** The field named, e.g. `params.arguments.amount` (`body` for a bare number). */
  field: string;
  /** The answer to the agent: a JSON-RPC error with its id (`null` when the line had none readable). */
  answer: JSONRPCMessage;
  /** Whether the line was a request (it has an id): notifications get no answer. */
  request: boolean;
}

function idOf(value: unknown): RequestId | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

/**
 * The refusal of one stdin line, or null when it may go on unchanged (no inexact number, or not
 * JSON at all: the SDK's parser reports that).
 */
export function refuseInexactLine(line: string): LineRefusal | null {
  let parsed: ReturnType<typeof parseExactJson>;
  try {
    parsed = parseExactJson(line);
  } catch (error) {
    if (error instanceof BodyRefusal || error instanceof SyntaxError) return null;
    throw error;
  }
  const first = parsed.inexact[0];
  if (!first) return null;
  const field = first.path.join(".") || "body";
  const id = idOf(parsed.value);
  const error = {
    code: ErrorCode.InvalidParams,
    message: `${field}: ${inexactNumberRule(first.text)}`,
    data: { field },
  };
  // A request without a readable id (a batch, a bad id) is answered with id null, as HTTP /mcp does.
  return { field, request: id !== null, answer: { jsonrpc: "2.0", id, error } as unknown as JSONRPCMessage };
}

/**
 * A pass-through of stdin's bytes, line by line, that holds back every line {@link refuseInexactLine}
 * refuses and hands its refusal to `refused` instead. Lines are split on `\n` as the SDK splits them.
 */
export function exactLines(refused: (refusal: LineRefusal) => void): Transform {
  const decoder = new StringDecoder("utf8");
  let tail = "";
  const check = (line: string, push: (text: string) => void) => {
    const refusal = line.trim() === "" ? null : refuseInexactLine(line.replace(/\r$/, ""));
    if (refusal) refused(refusal);
    else push(line);
  };
  return new Transform({
    transform(chunk: Buffer | string, _encoding, done: TransformCallback) {
      const lines = (tail + (typeof chunk === "string" ? chunk : decoder.write(chunk))).split("\n");
      tail = lines.pop() ?? "";
      for (const line of lines) check(line, (text) => this.push(`${text}\n`));
      done();
    },
    flush(done: TransformCallback) {
      tail += decoder.end();
      if (tail !== "") check(tail, (text) => this.push(text));
      done();
    },
  });
}
