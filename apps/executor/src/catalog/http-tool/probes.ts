/**
 * The key and identity probes of a declarative HTTP tool: a GET of the probe's URL template, read
 * with its "found" rule. Errors name the probe and its URL with non-loggable values redacted.
 */
import { callHttp, isAmbiguousError, isRejectedError, type ProbeContext, readPath } from "@tristate/core";
import { answerFromState } from "../declaration/probe-state.ts";
import type { ProbeState } from "../declaration/schema.ts";
import type { HostPolicy } from "./host-policy.ts";
import { redactionFor } from "./redaction.ts";
import type { FoundRule } from "./schema.ts";
import { fillUrl } from "./url-template.ts";

/** What a probe needs besides the call: its template, rule, static headers and which fields may be shown. */
export interface ProbeSpec {
  /** `key probe` or `identity probe`, for messages. */
  label: string;
  /** GET URL template with `{field}`s and the probe's special placeholder. */
  url: string;
  found: FoundRule;
  /** What the found item's state means (`../declaration/probe-state.ts`); undefined: the probe cannot tell. */
  state: ProbeState | undefined;
  /** Static request headers. */
  headers: Record<string, string> | undefined;
  /** Argument fields whose values may appear in messages. */
  loggable: ReadonlySet<string>;
  /** Secret argument fields: redacted whatever their length (see `redactArgs`). */
  secret: readonly string[];
  /** The catalog's `httpAllowHosts`, checked before the GET. */
  hosts: HostPolicy | undefined;
}

/**
 * Runs one probe: GETs its URL and reads the answer with its "found" rule. An error status the rule
 * names (a 404 that means absent) is an answer, not a failure.
 * @param special the value of the probe's special placeholder (`{key}`: the client reference;
 *   `{since}`: the intent's creation time, epoch ms).
 * @returns null when absent; when found, the core's answer read with the probe's `state`: the item
 *   (done or in progress), `refusedUnderKey` (a failed state) or `foundStateUnknown` (cannot tell).
 * @throws NotSentError, RejectedError or AmbiguousError from the GET, and Error when the answer is
 *   no evidence either way; in every message non-loggable argument values are redacted.
 * @throws NotSentError `INVALID_ARGUMENTS` before the GET when an argument would change the probe
 *   URL's path (`fillUrl`) or `httpAllowHosts` refuses its host: a steered probe is no evidence.
 */
export async function runProbe(
  spec: ProbeSpec,
  args: Record<string, unknown>,
  ctx: ProbeContext,
  special: { name: string; value: string },
): Promise<unknown> {
  const filled = fillUrl(
    spec.url,
    (n) => (n === special.name ? special.value : args[n]),
    (n) => n !== special.name && !spec.loggable.has(n),
    `${spec.label} GET`,
  );
  const redaction = redactionFor(args, spec.loggable, [filled], spec.secret);
  const where = `${spec.label} GET ${filled.shown}`;
  await spec.hosts?.check(filled.url, where, ctx.signal);
  const read = (status: number, body: unknown): unknown => {
    const answer = readFound(spec.found, status, body);
    if (answer.kind === "no_evidence") throw new Error(redaction.text(`${where}: ${answer.why}`));
    if (answer.evidence === null) return null;
    return answerFromState(spec.state, answer.items ?? [answer.evidence], spec.label);
  };
  let res: Awaited<ReturnType<typeof callHttp>>;
  try {
    res = await callHttp(
      { signal: ctx.signal, timeoutMs: ctx.timeoutMs },
      {
        method: "GET",
        url: filled.url,
        ...(spec.headers ? { headers: spec.headers } : {}),
        ...(spec.hosts?.dispatcher(filled.url) ? { dispatcher: spec.hosts.dispatcher(filled.url) } : {}),
      },
    );
  } catch (error) {
    const rule = spec.found;
    const status = isRejectedError(error) || isAmbiguousError(error) ? error.httpStatus : undefined;
    if (
      status !== undefined &&
      rule.type === "status" &&
      (rule.found.includes(status) || rule.absent.includes(status))
    ) {
      return read(status, isRejectedError(error) ? error.body : undefined);
    }
    throw redaction.error(error);
  }
  return read(res.status, res.body);
}

/**
 * A probe's answer read with its rule: the evidence (null: absent; `items`: every item of a
 * non-empty array, whose states are all read), or why it is no evidence.
 */
type Answer = { kind: "evidence"; evidence: unknown; items?: unknown[] } | { kind: "no_evidence"; why: string };

/**
 * Reads a probe's answer with its "found" rule.
 * @returns the evidence (the matched item or body; null for absent), or why the answer proves nothing.
 */
function readFound(rule: FoundRule, status: number, body: unknown): Answer {
  const evidence = (e: unknown): Answer => ({ kind: "evidence", evidence: e });
  switch (rule.type) {
    case "non_empty_array": {
      const list = rule.path ? readPath(body, rule.path) : body;
      if (!Array.isArray(list)) {
        return { kind: "no_evidence", why: `the answer${rule.path ? ` at ${rule.path}` : ""} is not an array` };
      }
      if (list.length === 0) return evidence(null);
      return { kind: "evidence", evidence: list[0] ?? { found: true }, items: list.map((i) => i ?? { found: true }) };
    }
    case "status":
      if (rule.found.includes(status)) return evidence(body ?? { status });
      if (rule.absent.includes(status)) return evidence(null);
      return { kind: "no_evidence", why: `HTTP ${status} is neither a "found" nor an "absent" status` };
    case "json_path_equals": {
      const value = readPath(body, rule.path) ?? null;
      if (rule.values.includes(value as string)) return evidence(body ?? { [rule.path]: value });
      if (!rule.absentValues || rule.absentValues.includes(value as string)) return evidence(null);
      return {
        kind: "no_evidence",
        why: `the answer has ${rule.path} = ${JSON.stringify(value)}, neither a "found" nor an "absent" value`,
      };
    }
  }
}
