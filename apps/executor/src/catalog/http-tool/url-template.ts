/**
 * `{name}` templates: URLs (values URL-encoded), effect phrases and compensation arguments; and the
 * redacted form of a filled URL, in which values of non-loggable argument fields stay `{field}`.
 */

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
 * Fills a URL template and its redacted twin.
 * @param values the value of each placeholder.
 * @param redacted whether a placeholder's value must not be shown (a non-loggable argument field).
 */
export function fillUrl(
  template: string,
  values: (name: string) => unknown,
  redacted: (name: string) => boolean,
): FilledUrl {
  const url = fill(template, values, true);
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
