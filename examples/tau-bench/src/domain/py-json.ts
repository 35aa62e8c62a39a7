/**
 * A Python-faithful JSON value model (BEHAVIOUR.md §1.3, §2): objects are `Map`s (insertion order kept,
 * numeric-looking keys included), Python floats are wrapped in {@link PyFloat}, Python ints are plain
 * numbers. Parsing keeps the int/float distinction; {@link pyDumps} prints like Python's `json.dumps`.
 */

/** A Python `float` (a JSON number written with `.`, `e` or `E`). Plain JS numbers are Python ints. */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** A Python number: a plain number is an `int`, a {@link PyFloat} a `float`. */
export type PyNumber = number | PyFloat;
/** A Python `dict` with string keys, in insertion order. */
export type PyDict = Map<string, PyValue>;
/** Any JSON value in the Python-faithful model. */
export type PyValue = null | boolean | string | number | PyFloat | PyValue[] | PyDict;

/** Raised for malformed JSON text. */
export class PyJsonSyntaxError extends Error {
  override name = "PyJsonSyntaxError";
}

/** Options for {@link pyParse}. */
export interface PyParseOptions {
  /** Reject strings with lone UTF-16 surrogates (they cannot be hashed with RFC 8785). */
  rejectLoneSurrogates?: boolean;
}

const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/** Parses JSON text into the Python-faithful model (strict JSON; non-finite numbers are rejected). */
export function pyParse(text: string, options: PyParseOptions = {}): PyValue {
  let i = 0;
  const fail = (what: string): never => {
    throw new PyJsonSyntaxError(`${what} at position ${i}`);
  };
  const ws = () => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else return;
    }
  };
  const str = (): string => {
    i++; // opening quote
    let out = "";
    let start = i;
    for (;;) {
      if (i >= text.length) fail("unterminated string");
      const c = text.charCodeAt(i);
      if (c === 34) {
        out += text.slice(start, i);
        i++;
        break;
      }
      if (c < 0x20) fail("control character in string");
      if (c === 92) {
        out += text.slice(start, i);
        const e = text[i + 1] ?? "";
        if (e === "u") {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("bad \\u escape");
          out += String.fromCharCode(Number.parseInt(hex, 16));
          i += 6;
        } else {
          const r = ESCAPES[e];
          if (r === undefined) fail("bad escape");
          out += r;
          i += 2;
        }
        start = i;
        continue;
      }
      i++;
    }
    if (options.rejectLoneSurrogates && hasLoneSurrogate(out)) fail("lone surrogate");
    return out;
  };
  const num = (): number | PyFloat => {
    const m = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
    m.lastIndex = i;
    const r = m.exec(text);
    if (!r) return fail("bad number");
    i = m.lastIndex;
    const v = Number(r[0]);
    if (!Number.isFinite(v)) fail("number out of range");
    return r[1] !== undefined || r[2] !== undefined ? new PyFloat(v) : v;
  };
  const value = (): PyValue => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const obj: PyDict = new Map();
      ws();
      if (text[i] === "}") {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail("expected key");
        const k = str();
        ws();
        if (text[i] !== ":") fail("expected ':'");
        i++;
        obj.set(k, value());
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return obj;
        }
        fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      i++;
      const arr: PyValue[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value());
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return arr;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    return num();
  };
  const v = value();
  ws();
  if (i !== text.length) fail("trailing characters");
  return v;
}

function hasLoneSurrogate(s: string): boolean {
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    if (c >= 0xd800 && c <= 0xdbff) {
      const n = s.charCodeAt(k + 1);
      if (!(n >= 0xdc00 && n <= 0xdfff)) return true;
      k++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}

/** Python `repr`/`json.dumps` text of a float (BEHAVIOUR.md §2.1); non-finite values as `json.dumps` prints them. */
export function floatRepr(x: number): string {
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return x > 0 ? "Infinity" : "-Infinity";
  const [mant = "", expText = "0"] = x.toExponential().split("e");
  const e = Number(expText);
  if (e > -5 && e < 16) {
    const s = String(x);
    return s.includes(".") ? s : `${s}.0`;
  }
  return `${mant}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
}

/** Python `str()` of a number (as used inside messages): ints plain, floats per §2.1 (`inf`, `nan`). */
export function pyStr(n: PyValue): string {
  if (n instanceof PyFloat) {
    if (Number.isNaN(n.value)) return "nan";
    if (!Number.isFinite(n.value)) return n.value > 0 ? "inf" : "-inf";
    return floatRepr(n.value);
  }
  if (typeof n === "number") return String(n);
  if (typeof n === "string") return n;
  if (n === null) return "None";
  if (typeof n === "boolean") return n ? "True" : "False";
  return pyDumps(n);
}

function quote(s: string): string {
  if (/^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/.test(s)) return `"${s}"`;
  let out = '"';
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    if (c === 34) out += '\\"';
    else if (c === 92) out += "\\\\";
    else if (c === 10) out += "\\n";
    else if (c === 13) out += "\\r";
    else if (c === 9) out += "\\t";
    else if (c === 8) out += "\\b";
    else if (c === 12) out += "\\f";
    else if (c < 0x20 || c >= 0x7f) out += `\\u${c.toString(16).padStart(4, "0")}`;
    else out += s[k];
  }
  return `${out}"`;
}

/** Serialises like Python's `json.dumps(value)` with default settings (BEHAVIOUR.md §1.3). */
export function pyDumps(v: PyValue): string {
  if (v === null) return "null";
  if (v === true) return "true";
  if (v === false) return "false";
  if (typeof v === "string") return quote(v);
  if (typeof v === "number") return String(v);
  if (v instanceof PyFloat) return floatRepr(v.value);
  if (Array.isArray(v)) return `[${v.map(pyDumps).join(", ")}]`;
  const parts: string[] = [];
  for (const [k, x] of v) parts.push(`${quote(k)}: ${pyDumps(x)}`);
  return `{${parts.join(", ")}}`;
}

/** Converts to plain JSON-compatible JS data (what `JSON.parse` of the Python text would give). */
export function toPlain(v: PyValue): unknown {
  if (v instanceof PyFloat) return v.value;
  if (Array.isArray(v)) return v.map(toPlain);
  if (v instanceof Map) {
    const o: Record<string, unknown> = Object.create(null);
    for (const [k, x] of v) o[k] = toPlain(x);
    return o;
  }
  return v;
}

/** Deep copy (floats are immutable and shared). */
export function deepCopy<T extends PyValue>(v: T): T {
  if (Array.isArray(v)) return v.map(deepCopy) as T;
  if (v instanceof Map) {
    const m: PyDict = new Map();
    for (const [k, x] of v as PyDict) m.set(k, deepCopy(x));
    return m as T;
  }
  return v;
}

/** A Python exception surfaced by the reference harness as `Error: <message>`. */
export class PyError extends Error {
  override name = "PyError";
}

/** Python's `repr()` of a string (used in KeyError texts): single quotes unless the text has one. */
export function pyReprStr(s: string): string {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = "";
  for (const ch of s) {
    if (ch === "\\") out += "\\\\";
    else if (ch === q) out += `\\${q}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch < " " || ch === "\x7f") out += `\\x${ch.charCodeAt(0).toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return `${q}${out}${q}`;
}

/** The KeyError a dict lookup of `key` raises, as the harness prints it. */
export function keyError(key: PyValue): PyError {
  return new PyError(typeof key === "string" ? pyReprStr(key) : pyStr(key));
}

/** `d[key]` with Python semantics (KeyError when missing). */
export function getKey(d: PyValue | undefined, key: string): PyValue {
  if (!(d instanceof Map))
    throw new PyError(`'${typeof d === "string" ? "str" : "NoneType"}' object is not subscriptable`);
  if (!d.has(key)) throw keyError(key);
  return d.get(key) as PyValue;
}

/** `d[key]` expected to be a dict. */
export function getDict(d: PyValue | undefined, key: string): PyDict {
  const v = getKey(d, key);
  if (!(v instanceof Map)) throw new PyError(`${pyReprStr(key)} is not a dict`);
  return v;
}

/** `d[key]` expected to be a list. */
export function getList(d: PyValue | undefined, key: string): PyValue[] {
  const v = getKey(d, key);
  if (!Array.isArray(v)) throw new PyError(`${pyReprStr(key)} is not a list`);
  return v;
}

/** Builds a dict from entries (keeps order). */
export function dict(entries: [string, PyValue][]): PyDict {
  return new Map(entries);
}
