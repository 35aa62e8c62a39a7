/**
 * What the search box was given: nothing; a 32-hex id (an idempotency key or a trace id); a value
 * that may be a run id or a business identity value (an order id like `A-1182`); a value that can
 * only be an identity value (spaces, non-ASCII: `Café 12`); or something too long to be either.
 */
export type SearchTarget =
  | { kind: "empty" }
  | { kind: "hex32"; value: string }
  | { kind: "runOrIdentity"; value: string }
  | { kind: "identity"; value: string }
  | { kind: "invalid"; reason: string };

/** The executor's rule for run ids: 1–200 printable ASCII characters without spaces. */
const RUN_ID = /^[\x21-\x7e]{1,200}$/;

const HEX32 = /^[0-9a-f]{32}$/i;

/** Longest value `intents.byIdentity` searches (characters, after trimming). */
export const IDENTITY_VALUE_MAX_LENGTH = 200;

/**
 * Classifies what was typed in the search box (trimmed). A 32-hex value is an idempotency key or a
 * trace id (the caller asks the API which; neither: an identity value); a value a run id could be is
 * a run id when that run exists, else an identity value; anything else up to 200 characters is an
 * identity value.
 */
export function classifySearch(raw: string): SearchTarget {
  const value = raw.trim();
  if (!value) return { kind: "empty" };
  if (HEX32.test(value)) return { kind: "hex32", value: value.toLowerCase() };
  if (RUN_ID.test(value)) return { kind: "runOrIdentity", value };
  if (value.length > IDENTITY_VALUE_MAX_LENGTH) {
    return {
      kind: "invalid",
      reason: `Not a key, trace id, run id or identity value: at most ${IDENTITY_VALUE_MAX_LENGTH} characters.`,
    };
  }
  return { kind: "identity", value };
}

/**
 * Where a run-id-shaped value leads, given what the API found: the run when it exists and no record's
 * identity holds the value; otherwise the identity results (which link the run when there is one).
 */
export function runOrIdentityPath(value: string, found: { run: boolean; identity: boolean }): string {
  return found.run && !found.identity ? runPath(value) : identityPath(value);
}

/**
 * The path segment of the run page whose id is in `?id=` ({@link runPath}): a space, which no run id
 * holds (ids are printable ASCII without spaces), so it never names a run itself.
 */
export const RUN_ID_IN_QUERY = " ";

/**
 * The page for a run id: `/runs/<id, encoded>`; for the ids `.` and `..`, which a URL path reads as
 * dot segments ("%2e" too: the browser would open `/runs` or `/`), `/runs/%20?id=<id>`.
 */
export function runPath(runId: string): string {
  if (runId === "." || runId === "..") {
    return `/runs/${encodeURIComponent(RUN_ID_IN_QUERY)}?${new URLSearchParams({ id: runId }).toString()}`;
  }
  return `/runs/${encodeURIComponent(runId)}`;
}

/** The page for an idempotency key. */
export function intentPath(key: string): string {
  return `/intents/${encodeURIComponent(key)}`;
}

/**
 * The page of records whose business identity holds `value` (`cursor`: a page after the first;
 * `asked`: what was typed when `value` is the form of it that matched, e.g. `#W5199551` for `W5199551`).
 */
export function identityPath(value: string, cursor?: string, asked?: string): string {
  const query = new URLSearchParams({ value });
  if (cursor) query.set("cursor", cursor);
  if (asked !== undefined && asked !== value) query.set("asked", asked);
  return `/identity?${query.toString()}`;
}

/** Punctuation a sentence puts after a word ("A-1182?", "#W5199551,"), stripped from its tokens. */
const TRAILING_PUNCTUATION = /[.,;:!?)\]}"'»”’]+$/u;

/**
 * The values to try, in order, when no record's identity holds what was typed: a single word with its
 * leading '#' removed, or with one added (`W5199551` → `#W5199551`); each id-like word of a
 * sentence ("what happened to order A-1182?" → `A-1182`): a word with a digit, at least 3 characters
 * once leading quotes and trailing punctuation are stripped, each with its '#' form too. Never the
 * value itself, no value twice, none longer than {@link IDENTITY_VALUE_MAX_LENGTH}.
 */
export function identityAlternatives(raw: string): string[] {
  const value = raw.trim();
  const out: string[] = [];
  const add = (v: string) => {
    if (v && v !== value && v.length <= IDENTITY_VALUE_MAX_LENGTH && !out.includes(v)) out.push(v);
  };
  const withHash = (v: string) => [v, v.startsWith("#") ? v.slice(1) : `#${v}`];
  const words = value.split(/\s+/);
  if (words.length === 1) for (const v of withHash(value).slice(1)) add(v);
  else {
    for (const word of words) {
      const token = word.replace(/^["'([«“‘]+/u, "").replace(TRAILING_PUNCTUATION, "");
      if (token.length >= 3 && /\d/.test(token)) for (const v of withHash(token)) add(v);
    }
  }
  return out;
}
