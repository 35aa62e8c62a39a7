/**
 * What a remote answered can always be stored (issue 21 §3). PostgreSQL's `jsonb` refuses NUL
 * (U+0000) and lone surrogates (an unpaired U+D800–U+DFFF), and a remote's answer, a probe's find, an
 * error body or an upstream MCP result may hold either: a 201 whose body held `"\u0000"` made the
 * outcome write fail forever. Input the executor is sent is refused with such text (`text.ts`); text
 * that comes *back* is kept, written in a form the log accepts:
 *
 * - NUL is stored as the six characters `\u0000`;
 * - a lone surrogate as the six characters of its JSON escape, lower-case hex (`\ud800`).
 *
 * A person reads exactly what the remote sent, in the notation JSON itself uses for it. Reversible
 * except where the remote's own text already held such a literal backslash sequence. Everything else
 * (paired surrogates, every other character) is stored unchanged. Applied to property names too.
 */

/**
 * In `JSON.stringify`'s output: an escape sequence (so `\\` is passed over as one), capturing a NUL or
 * surrogate escape. `JSON.stringify` writes NUL and lone surrogates as escapes only (never raw), and a
 * paired surrogate raw (never escaped), so every surrogate escape it writes is a lone one.
 */
const ESCAPE = /\\(?:u(0000|d[89a-f][0-9a-f]{2})|.)/g;

/**
 * The JSON text of `value` (as `JSON.stringify` writes it) that PostgreSQL's `jsonb` accepts: each NUL
 * and lone surrogate in a string or property name becomes the literal text of its JSON escape.
 * @returns the JSON text, or `undefined` where `JSON.stringify` gives none (`undefined`, a function).
 * @throws TypeError for what `JSON.stringify` refuses (a BigInt, a cycle).
 */
export function storableJson(value: unknown): string | undefined {
  const text = JSON.stringify(value);
  if (text === undefined || !text.includes("\\u")) return text;
  return text.replace(ESCAPE, (sequence, unstorable: string | undefined) =>
    unstorable === undefined ? sequence : `\\\\u${unstorable}`,
  );
}

/** `value` as {@link storableJson} would store it, read back: NUL and lone surrogates as literal escapes. */
export function storableValue<T>(value: T): T {
  const text = storableJson(value);
  return text === undefined ? value : (JSON.parse(text) as T);
}
