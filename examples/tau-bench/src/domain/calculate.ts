/**
 * `calculate(expression)` (BEHAVIOUR.md §6.1): a Python-faithful evaluator for `+ - * / // ** ( )`,
 * unary signs and int/decimal literals. Ints are exact (bigint) until the final `float()`; the result
 * is `round(x, 2)` printed like Python's `str(float)`. Failures return Python 3.11's error text.
 */
import { PyError, PyFloat, pyStr } from "./py-json.ts";
import { roundFloat2 } from "./py-number.ts";

type Val = { t: "int"; v: bigint } | { t: "float"; v: number } | { t: "complex" } | { t: "tuple"; n: number };

class Syntax extends Error {}

const MAX_POW_BITS = 200_000;

function typeName(a: Val): string {
  return a.t;
}

function toFloat(a: Val): number {
  if (a.t === "float") return a.v;
  if (a.t === "int") {
    const f = Number(a.v);
    if (!Number.isFinite(f)) throw new PyError("int too large to convert to float");
    return f;
  }
  throw new PyError(`float() argument must be a string or a real number, not '${typeName(a)}'`);
}

function checkFloat(r: number, ...inputs: number[]): number {
  if (!Number.isFinite(r) && inputs.every(Number.isFinite)) throw new PyError("(34, 'Numerical result out of range')");
  return r;
}

function binop(op: string, a: Val, b: Val): Val {
  if (a.t === "tuple" || b.t === "tuple") {
    if (op === "+" && a.t === "tuple" && b.t === "tuple") return { t: "tuple", n: a.n + b.n };
    if (op === "*" && a.t === "tuple" && b.t === "int") return { t: "tuple", n: b.v > 0n ? a.n * Number(b.v) : 0 };
    if (op === "*" && b.t === "tuple" && a.t === "int") return { t: "tuple", n: a.v > 0n ? b.n * Number(a.v) : 0 };
    if (op === "+" && a.t === "tuple") throw new PyError(`can only concatenate tuple (not "${typeName(b)}") to tuple`);
    const sym = op === "**" ? "** or pow()" : op;
    throw new PyError(`unsupported operand type(s) for ${sym}: '${typeName(a)}' and '${typeName(b)}'`);
  }
  if (a.t === "complex" || b.t === "complex") return { t: "complex" };
  if (a.t === "int" && b.t === "int") {
    const x = a.v;
    const y = b.v;
    switch (op) {
      case "+":
        return { t: "int", v: x + y };
      case "-":
        return { t: "int", v: x - y };
      case "*":
        return { t: "int", v: x * y };
      case "/": {
        if (y === 0n) throw new PyError("division by zero");
        const r = Number(x) / Number(y);
        if (!Number.isFinite(r)) throw new PyError("integer division result too large for a float");
        return { t: "float", v: r };
      }
      case "//": {
        if (y === 0n) throw new PyError("integer division or modulo by zero");
        let q = x / y;
        if (x % y !== 0n && x < 0n !== y < 0n) q -= 1n;
        return { t: "int", v: q };
      }
      default: {
        if (y < 0n) {
          if (x === 0n) throw new PyError("0.0 cannot be raised to a negative power");
          return { t: "float", v: checkFloat(toFloat(a) ** toFloat(b), toFloat(a)) };
        }
        const bits = x === 0n || x === 1n || x === -1n ? 1 : x.toString(2).length * Number(y);
        if (bits > MAX_POW_BITS) throw new PyError("int too large to convert to float");
        return { t: "int", v: x ** y };
      }
    }
  }
  const x = toFloat(a);
  const y = toFloat(b);
  switch (op) {
    case "+":
      return { t: "float", v: x + y };
    case "-":
      return { t: "float", v: x - y };
    case "*":
      return { t: "float", v: x * y };
    case "/":
      if (y === 0) throw new PyError("float division by zero");
      return { t: "float", v: x / y };
    case "//": {
      if (y === 0) throw new PyError("float floor division by zero");
      let mod = x % y;
      let div = (x - mod) / y;
      if (mod) {
        if (y < 0 !== mod < 0) {
          mod += y;
          div -= 1;
        }
      }
      let floordiv: number;
      if (div) {
        floordiv = Math.floor(div);
        if (div - floordiv > 0.5) floordiv += 1;
      } else floordiv = (x / y < 0 ? -0 : 0) as number;
      return { t: "float", v: floordiv };
    }
    default: {
      if (x === 0 && y < 0) throw new PyError("0.0 cannot be raised to a negative power");
      if (x < 0 && !Number.isInteger(y) && Number.isFinite(y)) return { t: "complex" };
      return { t: "float", v: checkFloat(x ** y, x, y) };
    }
  }
}

function unary(op: string, a: Val): Val {
  if (a.t === "tuple") throw new PyError(`bad operand type for unary ${op}: 'tuple'`);
  if (op === "+" || a.t === "complex") return a;
  return a.t === "int" ? { t: "int", v: -a.v } : { t: "float", v: -a.v };
}

type Tok = { k: "num"; text: string } | { k: "op"; text: string };

function tokenize(s: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  let depth = 0;
  while (i < s.length) {
    const c = s[i] as string;
    if (c === " ") {
      i++;
      continue;
    }
    const m = /\d+(?:\.\d*)?|\.\d+/y;
    m.lastIndex = i;
    const r = m.exec(s);
    if (r) {
      const text = r[0];
      if (!text.includes(".") && /^0\d*[1-9]/.test(text)) {
        throw new Syntax(
          "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers",
        );
      }
      out.push({ k: "num", text });
      i = m.lastIndex;
      continue;
    }
    if (s.startsWith("**", i) || s.startsWith("//", i)) {
      out.push({ k: "op", text: s.slice(i, i + 2) });
      i += 2;
      continue;
    }
    if (c === "(") depth++;
    if (c === ")" && --depth < 0) throw new Syntax("unmatched ')'");
    out.push({ k: "op", text: c });
    i++;
  }
  return out;
}

function parse(toks: Tok[]): Val {
  const openAtEof = toks.reduce((d, t) => d + (t.text === "(" ? 1 : t.text === ")" ? -1 : 0), 0) > 0;
  let p = 0;
  let depth = 0;
  const peek = () => toks[p];
  const isOp = (t: Tok | undefined, ...ops: string[]) => t !== undefined && t.k === "op" && ops.includes(t.text);
  const startsAtom = (t: Tok | undefined) => t !== undefined && (t.k === "num" || t.text === "(");
  /** Fails at the current token: Python reports adjacent expressions inside a closed group as a missing comma. */
  const fail = (): never => {
    if (depth > 0 && startsAtom(peek()) && toks.slice(p).some((t) => isOp(t, ")"))) {
      throw new Syntax("invalid syntax. Perhaps you forgot a comma?");
    }
    // Python's error pass reads on to the end unless it fails at the very first token.
    throw new Syntax(openAtEof && p > 0 ? "'(' was never closed" : "invalid syntax");
  };
  const close = () => {
    if (!isOp(peek(), ")")) fail();
    p++;
    depth--;
  };
  const expr = (): Val => {
    let a = term();
    while (isOp(peek(), "+", "-")) {
      const op = (toks[p++] as Tok).text;
      a = binop(op, a, term());
    }
    return a;
  };
  const term = (): Val => {
    let a = factor();
    while (isOp(peek(), "*", "/", "//")) {
      const op = (toks[p++] as Tok).text;
      a = binop(op, a, factor());
    }
    return a;
  };
  const factor = (): Val => {
    if (isOp(peek(), "+", "-")) {
      const op = (toks[p++] as Tok).text;
      return unary(op, factor());
    }
    return power();
  };
  const power = (): Val => {
    const a = primary();
    if (isOp(peek(), "**")) {
      p++;
      return binop("**", a, factor());
    }
    return a;
  };
  const primary = (): Val => {
    const callee = atom();
    if (!isOp(peek(), "(")) return callee;
    // A call such as `2(3)`: the syntax is valid; evaluation fails because numbers are not callable.
    p++;
    depth++;
    if (!isOp(peek(), ")")) expr();
    close();
    throw new PyError(`'${typeName(callee)}' object is not callable`);
  };
  const atom = (): Val => {
    const t = toks[p];
    if (t === undefined) return fail();
    if (t.k === "num") {
      p++;
      if (t.text.includes(".")) return { t: "float", v: Number(t.text) };
      return { t: "int", v: BigInt(t.text) };
    }
    if (t.text === "(") {
      p++;
      depth++;
      if (isOp(peek(), ")")) {
        close();
        return { t: "tuple", n: 0 };
      }
      const v = expr();
      close();
      return v;
    }
    return fail();
  };
  const v = expr();
  if (p !== toks.length) fail();
  return v;
}

/** Evaluates like the reference `calculate` tool and returns its output string. */
export function calculate(expression: string): string {
  if (![...expression].every((c) => "0123456789+-*/(). ".includes(c))) return "Error: invalid characters in expression";
  const src = expression.replace(/^[ ]+/, "");
  try {
    if (src.trim() === "") throw new Syntax("invalid syntax", { cause: 0 });
    const v = parse(tokenize(src));
    const f = toFloat(v);
    return pyStr(new PyFloat(roundFloat2(f)));
  } catch (e) {
    if (e instanceof Syntax) return `Error: ${e.message} (<string>, line ${e.cause === 0 ? 0 : 1})`;
    if (e instanceof PyError) return `Error: ${e.message}`;
    throw e;
  }
}
