/**
 * Where notification channels may point (issue 23 §3): `TRISTATE_NOTIFY_ALLOW_HOSTS`, the same rule
 * and entries as a catalog's `httpAllowHosts` (catalog/http-tool/host-policy.ts; docs/security.md
 * "SSRF"). Default `*`: any host whose every address is public — a channel URL naming cloud metadata
 * (`169.254.169.254`), a private or loopback address, or a name resolving to one, is refused. An
 * exact entry (`hooks.internal`, `127.0.0.1`) is allowed whatever it resolves to.
 *
 * Checked twice: when a channel is created (a refusal names `url`), and at every send, where a host
 * only a wildcard allows is connected through the policy's dispatcher, whose own lookup refuses a
 * non-public address (DNS rebinding), so nothing is written to an inside address.
 */
import { isNotSentError } from "@tristate/core";
import { type HostPolicy, hostPolicy, type Resolve } from "../catalog/http-tool/host-policy.ts";

/** The setting's name, as refusals name it. */
export const NOTIFY_ALLOW_HOSTS = "TRISTATE_NOTIFY_ALLOW_HOSTS";

/** How long the create-time check may wait for DNS, ms. */
const CREATE_CHECK_TIMEOUT_MS = 5000;

/**
 * The channels' host policy from the setting's entries (already split on commas and trimmed).
 * @param resolve host name resolution (node:dns `lookup`; replaceable for tests).
 * @throws CatalogError naming `TRISTATE_NOTIFY_ALLOW_HOSTS.<i>` for an entry that is not a host,
 *   `*.<domain>` or `*`.
 */
export function notifyHostPolicy(entries: readonly string[], resolve?: Resolve): HostPolicy {
  return hostPolicy([...entries], resolve, {
    setting: NOTIFY_ALLOW_HOSTS,
    list: NOTIFY_ALLOW_HOSTS,
  }) as HostPolicy;
}

/**
 * The create-time check of a webhook/Slack channel's `url`: null when it may be created, else the
 * rule it breaks, starting `url: ` (`url: host "169.254.169.254" is a link-local address; …`).
 * Refused: a host not in the list; a host only a wildcard allows that is a non-public IP address or
 * resolves (now) to any non-public address. A name that does not resolve now is accepted: the
 * send-time check decides then (a send to it fails as not sent).
 */
export async function refusedChannelUrl(policy: HostPolicy, url: string): Promise<string | null> {
  try {
    await policy.check(url, "url", AbortSignal.timeout(CREATE_CHECK_TIMEOUT_MS));
    return null;
  } catch (error) {
    if (isNotSentError(error) && error.code === "INVALID_ARGUMENTS") return error.message.replace(/; not sent$/, "");
    if (isNotSentError(error)) return null;
    throw error;
  }
}
