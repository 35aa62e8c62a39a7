/**
 * The admin's tenant filter as it lives in the dashboard's URL (`?tenant=acme`; absent: every
 * tenant). Pure helpers, shared by the header's picker, the links and the reads.
 */

/** The search parameter that holds the tenant filter. */
export const TENANT_PARAM = "tenant";

/**
 * A tenant name as the executor accepts it (mirrors `TENANT_PATTERN` of `@tristate/core`, which the
 * dashboard does not import at runtime; the executor checks the input again).
 */
const TENANT_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** The tenant named by a `tenant` search parameter, or undefined (absent or not a tenant name: every tenant). */
export function parseTenantParam(value: string | null | undefined): string | undefined {
  return value && TENANT_NAME.test(value) ? value : undefined;
}

/**
 * `href` (a path of the dashboard, with or without query and hash) with the tenant filter set to
 * `tenant`, or removed when `tenant` is undefined. Other parameters and the hash are kept; anything that
 * is not a path of this site (`https://…`, `//host`) is returned unchanged.
 */
export function withTenant(href: string, tenant: string | undefined): string {
  if (!href.startsWith("/") || href.startsWith("//")) return href;
  const base = "http://dashboard.invalid";
  const url = new URL(href, base);
  if (tenant === undefined) url.searchParams.delete(TENANT_PARAM);
  else url.searchParams.set(TENANT_PARAM, tenant);
  return `${url.pathname}${url.search}${url.hash}`;
}
