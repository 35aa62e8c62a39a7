/**
 * `{name}` templates: URLs (values URL-encoded), effect phrases and compensation arguments; and the
 * redacted form of a filled URL, in which values of non-loggable argument fields stay `{field}`.
 * A URL's scheme and authority hold no placeholder (checked when the catalog loads, `originPart`),
 * and no value may change its path's shape (checked on every fill, `fillUrl`).
 */
import { NotSentError } from "@tristate/core";

/** `{name}` placeholders of a template. */
const PLACEHOLDER = /\{([^{}]*)\}/g;

/** The names of a template's `{name}` placeholders, in order (repeats kept). */
export function placeholders(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((m) => m[1] ?? "");
}

/**
 * Fills `{name}` placeholders: strings as they are, other values as JSON, null/undefined as "".
 * @param encode URL-encode each value (`encodeURIComponent`).
 */
export function fill(template: string, values: (name: string) => unknown, encode: boolean): string {
  return template.replace(PLACEHOLDER, (_, name: string) => {
    const text = textOf(values(name));
    return encode ? encodeURIComponent(text) : text;
  });
}

/** A template filled with placeholders a URL parser leaves alone, one per redacted name. */
const marker = (i: number) => `__tristate_redacted_${i}__`;

/** A URL filled for sending, and how to show it without personal data. */
export interface FilledUrl {
  /** The URL to send: every placeholder filled and URL-encoded. */
  url: string;
  /** The same URL with each redacted placeholder left as `{name}`, e.g. `https://crm.example/users/{email}`. */
  shown: string;
  /**
   * Pairs `[as sent, as shown]` for each form the URL may take in a message: as filled, as parsed
   * (`href`, normalised percent-encoding), `origin + pathname`, and `pathname + search`. Longest first.
   */
  forms: [string, string][];
}

/**
 * The scheme-and-authority part of a URL template: up to the first `/`, `\\`, `?` or `#` after `://`
 * (the whole template when it has no `://`, or up to the first of those characters).
 */
export function originPart(template: string): string {
  const m = /^[^/\\?#]*:\/\/[^/\\?#]*/.exec(template) ?? /^[^/\\?#]*/.exec(template);
  return m?.[0] ?? "";
}

/** The placeholders that are a whole path segment of a URL template on their own (`/customers/{id}/…`). */
export function wholeSegmentPlaceholders(template: string): string[] {
  return pathSegments(template).flatMap((segment) => /^\{([^{}]*)\}$/.exec(segment)?.slice(1) ?? []);
}

/** The segments of a URL template's path (between the authority and `?` / `#`), template text as is. */
function pathSegments(template: string): string[] {
  const rest = template.slice(originPart(template).length);
  const path = rest.slice(0, rest.search(/[?#]|$/));
  return path.split(/[/\\]/).slice(1);
}

/** A filled path segment the URL parser would treat as `.` or `..` (`%2E` is a dot to it), or empty. */
const DOT_OR_EMPTY = /^(?:\.|%2e){0,2}$/i;

/**
 * Fills a URL template and its redacted twin. No value can change the URL's shape: values are
 * URL-encoded (`/`, `\\`, `?`, `#`, `&`, `%` included), and a path segment that a value would make
 * `.`, `..` or empty is refused — URL parsers collapse `.`/`..` segments, and `%2E%2E` too (WHATWG
 * URL, hence Node's `new URL` that `callHttp` parses every URL with), so encoding cannot save them.
 * @param values the value of each placeholder.
 * @param redacted whether a placeholder's value must not be shown (a non-loggable argument field).
 * @param label what is sent, for the refusal's message (`notify: POST`, `key probe GET`).
 * @throws NotSentError `INVALID_ARGUMENTS` naming the placeholders (never their values) when a value
 *   would change the path's shape or the URL's origin.
 */
export function fillUrl(
  template: string,
  values: (name: string) => unknown,
  redacted: (name: string) => boolean,
  label = "GET",
): FilledUrl {
  const refuse = (names: string[], rule: string) =>
    new NotSentError(`${label} ${template}: ${names.map((n) => `{${n}}`).join("")} ${rule}; not sent`, {
      code: "INVALID_ARGUMENTS",
    });
  for (const segment of pathSegments(template)) {
    const names = placeholders(segment);
    if (names.length > 0 && DOT_OR_EMPTY.test(fill(segment, values, true))) {
      throw refuse(names, 'would make a path segment ".", ".." or empty, which changes the path');
    }
  }
  const url = fill(template, values, true);
  const shape = (u: URL | null) => u && `${u.origin} ${u.username}:${u.password} ${u.pathname.split("/").length}`;
  const sent = parse(url);
  if (!sent || shape(sent) !== shape(parse(fill(template, () => "x", true)))) {
    throw refuse(placeholders(template), "would change the URL's origin or the shape of its path");
  }
  const names: string[] = [];
  const marked = fill(
    template,
    (name) => {
      if (!redacted(name)) return values(name);
      names.push(name);
      return marker(names.length - 1);
    },
    true,
  );
  const unmark = (text: string) => names.reduce((t, name, i) => t.split(marker(i)).join(`{${name}}`), text);
  const pairs = new Map<string, string>([[url, unmark(marked)]]);
  const real = parse(url);
  const twin = parse(marked);
  if (real && twin) {
    pairs.set(real.href, unmark(twin.href));
    pairs.set(real.origin + real.pathname, unmark(twin.origin + twin.pathname));
    pairs.set(real.pathname + real.search, unmark(twin.pathname + twin.search));
  }
  const forms = [...pairs].filter(([sent, shown]) => sent !== shown).sort((a, b) => b[0].length - a[0].length);
  return { url, shown: unmark(marked), forms };
}

function parse(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

function textOf(v: unknown): string {
  return v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v);
}
