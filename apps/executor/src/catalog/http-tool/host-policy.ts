/**
 * The optional allowlist of hosts a catalog's declarative HTTP tools may call (`httpAllowHosts`).
 * Entries:
 * - an exact host, name or IP address (`payments.internal`, `10.0.0.7`, `::1`): that host may be
 *   called whatever it resolves to — private, loopback and link-local addresses included;
 * - `*.<domain>`: any host under that domain (not the domain itself), if every address it resolves
 *   to is public;
 * - `*`: any host, if every address it resolves to is public.
 * Hosts are compared as the WHATWG URL parser writes them (lower case, IPv4 in dotted form, so
 * `2130706433` and `0x7f.1` are `127.0.0.1`; IPv6 in brackets). Address ranges are checked with
 * `node:net`'s `BlockList` (IPv4-mapped IPv6 addresses are checked as IPv4).
 *
 * DNS rebinding: a name that resolved to a public address for the check could resolve to an inside
 * one a moment later, when the connection is made. So requests to a host that only a wildcard allows
 * go through {@link HostPolicy.dispatcher}, whose connections resolve the name themselves and refuse
 * any non-public address in that same lookup: the address checked is the address connected to.
 */

import type { LookupAddress, LookupOptions } from "node:dns";
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { isNotSentError, NotSentError } from "@tristate/core";
import { Agent, type Dispatcher } from "undici";
import { CatalogError } from "../catalog-error.ts";

/** Resolves a host name to every address it has (node:dns `lookup` with `all: true`). */
export type Resolve = (host: string) => Promise<{ address: string }[]>;

const resolveAll: Resolve = (host) => lookup(host, { all: true, verbatim: true });

/** Non-public address ranges, by the name a refusal gives them. */
const RANGES: [label: string, cidrs: string[]][] = [
  ["loopback", ["127.0.0.0/8", "::1/128"]],
  ["private", ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]],
  ["link-local", ["169.254.0.0/16", "fe80::/10"]],
  ["unique-local", ["fc00::/7", "fec0::/10"]],
  ["unspecified", ["0.0.0.0/8", "::/96"]],
  ["shared (carrier-grade NAT)", ["100.64.0.0/10"]],
  [
    "special-purpose",
    ["192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32"],
  ],
  ["multicast or reserved", ["224.0.0.0/4", "240.0.0.0/4", "ff00::/8"]],
  ["IPv6 transition (NAT64, 6to4, Teredo)", ["64:ff9b::/96", "64:ff9b:1::/48", "2002::/16", "2001::/32"]],
];

const BLOCKS: [label: string, list: BlockList][] = RANGES.map(([label, cidrs]) => {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [net = "", bits = ""] = cidr.split("/");
    list.addSubnet(net, Number(bits), isIP(net) === 6 ? "ipv6" : "ipv4");
  }
  return [label, list];
});

/**
 * The non-public range an IP address is in (`loopback`, `private`, `link-local`, …), or null when
 * it is public. An address that does not parse counts as non-public.
 */
export function nonPublicRange(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, "");
  const family = isIP(bare);
  if (family === 0) return "unparsable";
  for (const [label, list] of BLOCKS) if (list.check(bare, family === 6 ? "ipv6" : "ipv4")) return label;
  return null;
}

/** The allowlist of one catalog. */
export interface HostPolicy {
  /** The entries as written. */
  readonly entries: readonly string[];
  /** Whether an entry names `hostname` (a URL's `hostname`): exactly, by a wildcard, or not at all (null). */
  match(hostname: string): "exact" | "wildcard" | null;
  /**
   * Refuses, before anything is sent, a URL whose host is not listed, or that only a wildcard lists
   * and that is or resolves to a non-public address.
   * @param where what is being sent, for messages (`notify: POST http://…/{email}`).
   * @throws NotSentError `INVALID_ARGUMENTS` (refused), `NOT_SENT` (the host does not resolve) or
   *   `DEADLINE_EXCEEDED` (`signal` fired while resolving).
   */
  check(url: string, where: string, signal?: AbortSignal): Promise<void>;
  /**
   * The undici dispatcher to send `url` with: for a host only a wildcard allows, one whose
   * connections resolve the name and refuse a non-public address in the lookup they connect with
   * (no window for DNS rebinding between {@link check} and the connection); undefined otherwise.
   */
  dispatcher(url: string): Dispatcher | undefined;
}

/** How refusals name the list: the setting (`httpAllowHosts`) and the list in "host … is not in <list>". */
export interface PolicyNames {
  setting: string;
  list: string;
}

/** A catalog's `httpAllowHosts`. */
const CATALOG_NAMES: PolicyNames = { setting: "httpAllowHosts", list: "the catalog's httpAllowHosts" };

/**
 * Reads a catalog's `httpAllowHosts` (or another list with the same entries, named by `names`:
 * `TRISTATE_NOTIFY_ALLOW_HOSTS` for notification channels).
 * @param raw the setting; undefined: no allowlist (every host the catalog names may be called).
 * @param resolve host name resolution (node:dns `lookup`; replaceable for tests).
 * @param names how refusals and entry errors name the list (default: the catalog's `httpAllowHosts`).
 * @throws CatalogError naming `names.setting` or the bad entry.
 */
export function hostPolicy(
  raw: unknown,
  resolve: Resolve = resolveAll,
  names: PolicyNames = CATALOG_NAMES,
): HostPolicy | undefined {
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw)) {
    throw new CatalogError(
      null,
      names.setting,
      'must be a list of hosts ("payments.internal", "10.0.0.7", "*.example.com", "*")',
    );
  }
  const exact = new Set<string>();
  const suffixes: string[] = [];
  let any = false;
  raw.forEach((entry: unknown, i) => {
    const host = typeof entry === "string" ? hostOfEntry(entry) : null;
    if (host === null) {
      throw new CatalogError(
        null,
        `${names.setting}.${i}`,
        `must be a host name or IP address ("payments.internal", "10.0.0.7", "::1"), "*.<domain>" or "*"; got ${JSON.stringify(entry)}`,
      );
    }
    if (host === "*") any = true;
    else if (host.startsWith("*")) suffixes.push(host.slice(1));
    else exact.add(host);
  });
  const match = (hostname: string): "exact" | "wildcard" | null => {
    const host = hostname.toLowerCase().replace(/\.$/, "");
    if (exact.has(host)) return "exact";
    if (isIP(host.replace(/^\[|\]$/g, "")) === 0 && suffixes.some((s) => host.endsWith(s))) return "wildcard";
    return any ? "wildcard" : null;
  };
  const entries = raw as string[];
  let pinned: Agent | undefined;
  return {
    entries,
    match,
    dispatcher(url) {
      const hostname = new URL(url).hostname;
      if (match(hostname) !== "wildcard" || isIP(hostname.replace(/^\[|\]$/g, "")) !== 0) return undefined;
      pinned ??= new Agent({ connect: { lookup: publicOnlyLookup(resolve) } });
      return pinned;
    },
    async check(url, where, signal) {
      const refuse = (rule: string) => new NotSentError(`${where}: ${rule}; not sent`, { code: "INVALID_ARGUMENTS" });
      const hostname = new URL(url).hostname;
      const host = hostname.replace(/^\[|\]$/g, "");
      const how = match(hostname);
      if (how === null) throw refuse(`host ${JSON.stringify(host)} is not in ${names.list}`);
      if (how === "exact") return;
      const addresses =
        isIP(host) !== 0 ? [host] : (await resolving(resolve(host), host, where, signal)).map((a) => a.address);
      if (addresses.length === 0)
        throw new NotSentError(`${where}: host ${JSON.stringify(host)} has no address; not sent`);
      for (const address of addresses) {
        const range = nonPublicRange(address);
        if (range === null) continue;
        const what = address === host ? `is a ${range} address` : `resolves to ${address}, a ${range} address`;
        throw refuse(
          `host ${JSON.stringify(host)} ${what}; ${names.setting} allows non-public addresses only for a host it lists exactly`,
        );
      }
    },
  };
}

/** `net.connect`'s `lookup` callback. */
type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `net.connect` that resolves with `resolve` and fails (NotSentError
 * `INVALID_ARGUMENTS`, nothing sent) when any address is not public: the addresses it hands the
 * socket are the ones it checked.
 */
export function publicOnlyLookup(resolve: Resolve) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname).then(
      (found) => {
        const bad = found.find((a) => nonPublicRange(a.address) !== null);
        if (found.length === 0 || bad) {
          const why = bad
            ? `resolves to ${bad.address}, a ${nonPublicRange(bad.address)} address, at connect time`
            : "has no address at connect time";
          callback(
            new NotSentError(`host ${JSON.stringify(hostname)} ${why}; not sent`, { code: "INVALID_ARGUMENTS" }),
            "",
          );
          return;
        }
        const all = found.map((a) => ({ address: a.address, family: isIP(a.address) }));
        if (options.all) callback(null, all);
        else callback(null, all[0]!.address, all[0]!.family);
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), ""),
    );
  };
}

/** A host resolved, or a NotSentError when it does not resolve or `signal` fires first. */
async function resolving<T>(pending: Promise<T>, host: string, where: string, signal?: AbortSignal): Promise<T> {
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () =>
      reject(
        new NotSentError(`${where}: aborted while resolving ${JSON.stringify(host)}; not sent`, {
          code: "DEADLINE_EXCEEDED",
        }),
      );
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([pending, aborted]);
  } catch (error) {
    if (isNotSentError(error)) throw error;
    const code = (error as { code?: unknown })?.code;
    throw new NotSentError(
      `${where}: host ${JSON.stringify(host)} does not resolve (${String(code ?? error)}); not sent`,
      {
        cause: error,
      },
    );
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

/** An entry as the URL parser writes its host (`*` and `*.domain` kept), or null when it is not a bare host. */
function hostOfEntry(entry: string): string | null {
  if (entry === "*") return "*";
  const wildcard = entry.startsWith("*.");
  const text = wildcard ? entry.slice(2) : entry;
  if (text === "" || /[/\\?#@\s*]/.test(text)) return null;
  const bare = text.replace(/^\[|\]$/g, "");
  const v6 = isIP(bare) === 6;
  if (text.includes(":") && !v6) return null;
  if (wildcard && isIP(bare) !== 0) return null;
  let hostname: string;
  try {
    hostname = new URL(`http://${v6 ? `[${bare}]` : text}/`).hostname;
  } catch {
    return null;
  }
  hostname = hostname.replace(/\.$/, "");
  return wildcard ? `*.${hostname}` : hostname;
}
