// A parser for the YAML subset our compose and provisioning files use (no dependency: the check runs
// before anything else is installed): block maps and lists (lists of scalars or of maps), `key: >-`
// folded text, flow lists `[a, "b"]` and flow maps `{ k: v }`, quoted or plain scalars (kept as
// strings), and comments. Anything else (anchors, multi-documents, tags) is refused with its line.

/** Strips a comment that is not inside quotes. */
function stripComment(text) {
  let quote = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(text[i - 1]))) return text.slice(0, i).trimEnd();
  }
  return text.trimEnd();
}

/** Splits flow-collection content at top-level commas. */
function splitFlow(text) {
  const parts = [];
  let depth = 0;
  let quote = null;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") depth--;
    else if (c === "," && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = text.slice(start).trim();
  if (last) parts.push(last);
  return parts;
}

/** The index of a mapping's `: ` (or trailing `:`) outside quotes and flow collections, or -1. */
function keyColon(text) {
  let quote = null;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") depth--;
    else if (c === ":" && depth === 0 && (i === text.length - 1 || text[i + 1] === " ")) return i;
  }
  return -1;
}

/** A scalar or flow collection. */
function scalar(text, line) {
  const t = text.trim();
  if (t.startsWith("[")) {
    if (!t.endsWith("]")) throw new Error(`line ${line}: unclosed flow list`);
    return splitFlow(t.slice(1, -1)).map((p) => scalar(p, line));
  }
  if (t.startsWith("{")) {
    if (!t.endsWith("}")) throw new Error(`line ${line}: unclosed flow map`);
    const out = {};
    for (const part of splitFlow(t.slice(1, -1))) {
      const at = keyColon(part);
      if (at < 0) throw new Error(`line ${line}: flow map entry without a key: ${part}`);
      out[unquote(part.slice(0, at))] = scalar(part.slice(at + 1), line);
    }
    return out;
  }
  if (/^[&*!]/.test(t)) throw new Error(`line ${line}: anchors, aliases and tags are not supported`);
  return unquote(t);
}

function unquote(text) {
  const t = text.trim();
  if ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'"))) return t.slice(1, -1);
  return t;
}

/**
 * Parses `source` (the YAML subset above) into plain objects, arrays and strings.
 * @throws Error naming the line of anything outside the subset.
 */
export function parseYamlSubset(source) {
  const lines = [];
  for (const [i, raw] of source.split("\n").entries()) {
    if (raw.includes("\t")) throw new Error(`line ${i + 1}: tabs are not allowed`);
    const text = stripComment(raw);
    if (!text.trim()) continue;
    if (text.trim() === "---") throw new Error(`line ${i + 1}: one document only`);
    lines.push({ indent: text.length - text.trimStart().length, text: text.trim(), line: i + 1 });
  }
  let pos = 0;

  function block(indent) {
    const first = lines[pos];
    if (first.text.startsWith("- ") || first.text === "-") return list(indent);
    return map(indent);
  }

  function list(indent) {
    const out = [];
    while (
      pos < lines.length &&
      lines[pos].indent === indent &&
      (lines[pos].text.startsWith("- ") || lines[pos].text === "-")
    ) {
      const { text, line } = lines[pos];
      const rest = text.slice(1).trim();
      if (rest && keyColon(rest) >= 0 && !rest.startsWith("[") && !rest.startsWith("{") && !/^["']/.test(rest)) {
        // `- key: value` starts a map whose other keys sit at indent + 2.
        lines[pos] = { indent: indent + 2, text: rest, line };
        out.push(map(indent + 2));
      } else if (rest === ">-" || rest === ">" || rest === "|" || rest === "|-") {
        pos++;
        const parts = [];
        while (pos < lines.length && lines[pos].indent > indent) parts.push(lines[pos++].text);
        out.push(parts.join(rest.startsWith(">") ? " " : "\n"));
      } else if (!rest) {
        pos++;
        out.push(pos < lines.length && lines[pos].indent > indent ? block(lines[pos].indent) : null);
      } else {
        pos++;
        out.push(scalar(rest, line));
      }
    }
    return out;
  }

  function map(indent) {
    const out = {};
    while (pos < lines.length && lines[pos].indent === indent) {
      const { text, line } = lines[pos];
      if (text.startsWith("- ")) break;
      const at = keyColon(text);
      if (at < 0) throw new Error(`line ${line}: expected "key: value", got: ${text}`);
      const key = unquote(text.slice(0, at));
      const value = text.slice(at + 1).trim();
      pos++;
      if (value === ">-" || value === ">" || value === "|" || value === "|-") {
        const parts = [];
        while (pos < lines.length && lines[pos].indent > indent) parts.push(lines[pos++].text);
        out[key] = parts.join(value.startsWith(">") ? " " : "\n");
      } else if (value) out[key] = scalar(value, line);
      else if (pos < lines.length && lines[pos].indent > indent) out[key] = block(lines[pos].indent);
      else if (pos < lines.length && lines[pos].indent === indent && lines[pos].text.startsWith("- "))
        out[key] = list(indent);
      else out[key] = null;
    }
    return out;
  }

  if (!lines.length) return null;
  const doc = block(lines[0].indent);
  if (pos < lines.length) throw new Error(`line ${lines[pos].line}: unexpected indentation`);
  return doc;
}
