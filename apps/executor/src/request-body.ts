/**
 * A request body read exactly (issue 21 §4): its bytes must be UTF-8 (never silently replaced with
 * U+FFFD, which would collapse different byte sequences into one identity), and a JSON number that
 * `JSON.parse` would not keep exactly (`2512292042121000001` read as `2512292042121000000`, `1e400`
 * read as `Infinity`) is never rounded: it is handed on as its exact text, in a JSON string, and
 * listed in {@link InexactNumber}s so the API can refuse it (400 naming the field) unless the field
 * is declared to take it losslessly (a string, a big integer parsed from a string). The body is
 * parsed by `lossless-json` only when it may hold such a number; otherwise by `JSON.parse`.
 */
import type { IncomingMessage } from "node:http";
import { isSafeNumber, parse as parseLossless } from "lossless-json";
import type { TurnHint } from "./arrival.ts";

/** A number in a request body that JSON parsing would not keep exactly. */
export interface InexactNumber {
  /** Property names and array indexes from the body's root (a batch's call index first). */
  path: (string | number)[];
  /** The number exactly as sent, e.g. `2512292042121000001`. */
  text: string;
}

/** Why a body was refused: its rule in words, for a 400 naming `body`. */
export class BodyRefusal extends Error {
  override readonly name = "BodyRefusal";
  /** The HTTP status: 400 (not UTF-8, not JSON) or 413 (over the size limit). */
  readonly status: 400 | 413;
  constructor(status: 400 | 413, message: string) {
    super(message);
    this.status = status;
  }
}

/** The rule an invalid UTF-8 body breaks, in words. */
export const BODY_NOT_UTF8 =
  "body: must be valid UTF-8 (it holds bytes that are not; they are refused, never replaced with U+FFFD)";

/** The rule an inexact number breaks, in words, naming what it would have become. */
export function inexactNumberRule(text: string): string {
  return (
    `must be a number JSON holds exactly (${text} would be read as ${String(Number(text))}): ` +
    "send it as a string to a field declared to take one"
  );
}

/**
 * Reads a request's body, at most `maxBytes`, and decodes it as UTF-8 (fatal: invalid bytes refuse it).
 * @throws BodyRefusal 413 over `maxBytes`, 400 when it is not UTF-8.
 */
export async function readUtf8Body(req: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new BodyRefusal(413, `request body over ${maxBytes} bytes (TRISTATE_MAX_BODY_BYTES)`);
    chunks.push(chunk);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(Buffer.concat(chunks));
  } catch {
    throw new BodyRefusal(400, BODY_NOT_UTF8);
  }
}

/** Text that may hold a number `JSON.parse` rounds: 16 or more digits (with dots) in a row, or an exponent. */
const MAYBE_INEXACT = /[0-9.]{16,}|[0-9][eE]/;

/** A number lossless-json kept as text because it is not exact as a JS number. */
class Inexact {
  constructor(readonly text: string) {}
}

/**
 * Parses JSON text keeping every number exact: numbers a JS number holds exactly become numbers;
 * the others become their exact text (a string) and are listed with their paths.
 * @throws SyntaxError when `text` is not JSON; BodyRefusal (400) for JSON the exact parser refuses
 *   (a property name repeated with another value), which `JSON.parse` would have read with its numbers rounded.
 */
export function parseExactJson(text: string): { value: unknown; inexact: InexactNumber[] } {
  if (!MAYBE_INEXACT.test(text)) return { value: JSON.parse(text), inexact: [] };
  let value: unknown;
  try {
    value = parseLossless(text, null, (n: string) => (isSafeNumber(n) ? Number(n) : new Inexact(n)));
  } catch (error) {
    JSON.parse(text); // not JSON at all: its SyntaxError
    throw new BodyRefusal(400, `body: ${(error as Error).message}`);
  }
  const inexact: InexactNumber[] = [];
  const replaced = replaceInexact(value, inexact);
  return { value: replaced, inexact };
}

/** Replaces each {@link Inexact} in `root` (walked iteratively) by its text, recording where it was. */
function replaceInexact(root: unknown, found: InexactNumber[]): unknown {
  if (root instanceof Inexact) {
    found.push({ path: [], text: root.text });
    return root.text;
  }
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value: root, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value !== "object" || value === null) continue;
    const entries: [string | number, unknown][] = Array.isArray(value)
      ? value.map((v, i) => [i, v])
      : Object.entries(value);
    for (const [name, child] of entries) {
      if (child instanceof Inexact) {
        found.push({ path: [...path, name], text: child.text });
        // An own `__proto__` (JSON.parse keeps one) is set as data, never through the inherited setter.
        Object.defineProperty(value, name, { value: child.text, writable: true, enumerable: true, configurable: true });
      } else stack.push({ value: child, path: [...path, name] });
    }
  }
  return root;
}

/** An inexact number of a tRPC request: which call of the batch (0 when not batched) and where in its input. */
export interface CallInexactNumber extends InexactNumber {
  /** The call's index in a `?batch=1` request (its body is `{"0": input, "1": input, …}`); 0 otherwise. */
  call: number;
}

const bodies = new WeakMap<IncomingMessage, CallInexactNumber[]>();
const turns = new WeakMap<IncomingMessage, TurnHint | readonly TurnHint[]>();

/** A call's turn as its input gives it (`deadlineEpochMs`, `budgetMs`), numbers only. */
function turnOfInput(input: unknown): TurnHint {
  if (typeof input !== "object" || input === null) return {};
  const { deadlineEpochMs, budgetMs } = input as Record<string, unknown>;
  return {
    ...(typeof deadlineEpochMs === "number" ? { deadlineEpochMs } : {}),
    ...(typeof budgetMs === "number" ? { budgetMs } : {}),
  };
}

/**
 * The turn of a tRPC body: its input's, or in a batch every call's (one hint per call; a call naming
 * none has the default budget): the key check, done once for the batch, is bounded by the tightest.
 */
function turnOfBody(value: unknown, batch: boolean): TurnHint | TurnHint[] {
  if (!batch) return turnOfInput(value);
  if (typeof value !== "object" || value === null) return {};
  return Object.values(value).map(turnOfInput);
}

function isBatch(url: string): boolean {
  const query = url.indexOf("?");
  return query >= 0 && new URLSearchParams(url.slice(query + 1)).get("batch") === "1";
}

/**
 * Reads a tRPC request's body exactly and hands it to tRPC as text (`req.body`): invalid UTF-8 is
 * refused; inexact numbers become their exact text, listed for {@link inexactNumbersOf}. A body that
 * is not JSON is handed on as it is (tRPC answers it).
 * @throws BodyRefusal as {@link readUtf8Body}.
 */
export async function prepareTrpcBody(req: IncomingMessage, maxBytes: number): Promise<void> {
  let text = await readUtf8Body(req, maxBytes);
  try {
    const { value, inexact } = parseExactJson(text);
    const batch = isBatch(req.url ?? "");
    turns.set(req, turnOfBody(value, batch));
    if (inexact.length > 0) {
      text = JSON.stringify(value);
      bodies.set(
        req,
        inexact.map((n) =>
          batch ? { call: Number(n.path[0]), path: n.path.slice(1), text: n.text } : { call: 0, ...n },
        ),
      );
    }
  } catch (error) {
    if (error instanceof BodyRefusal) throw error;
    // not JSON: tRPC refuses it with its own parse error
  }
  (req as IncomingMessage & { body?: string }).body = text;
}

/**
 * The turn {@link prepareTrpcBody} found in `req`'s body (`deadlineEpochMs` or `budgetMs` of the
 * call, or one per call of a batch); empty when none (then the default budget).
 */
export function turnOf(req: IncomingMessage): TurnHint | readonly TurnHint[] {
  return turns.get(req) ?? {};
}

/** The inexact numbers {@link prepareTrpcBody} found in `req`'s body (empty when none). */
export function inexactNumbersOf(req: IncomingMessage): readonly CallInexactNumber[] {
  return bodies.get(req) ?? [];
}
