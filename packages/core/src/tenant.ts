/**
 * Tenants: every API key, intent record, run plan and audit row belongs to one (a project or
 * namespace). Records are unique per tenant, and the idempotency key is derived with the tenant, so
 * two tenants' identical run/step ids never meet, not in the log and not at the remote.
 * Source: issue 10 ("Runs belong to their owner").
 */

/** The tenant of keys made without one, of the first admin key, and of records made before tenants existed. */
export const DEFAULT_TENANT = "default";

/** Tenant names: 1–63 characters, lower-case letters, digits, `-` and `_`, starting with a letter or digit. */
export const TENANT_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** The rule of {@link TENANT_PATTERN}, in words, for error messages. */
export const TENANT_RULE_TEXT =
  "must be 1–63 characters: lower-case letters, digits, '-' and '_', starting with a letter or digit";

/**
 * Checks a tenant name.
 * @returns the name.
 * @throws TypeError naming `field` and the rule when the name does not match {@link TENANT_PATTERN}.
 */
export function checkTenant(tenant: unknown, field = "tenant"): string {
  if (typeof tenant !== "string" || !TENANT_PATTERN.test(tenant)) throw new TypeError(`${field} ${TENANT_RULE_TEXT}`);
  return tenant;
}
