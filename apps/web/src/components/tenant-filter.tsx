"use client";

import { createColumnHelper } from "@tanstack/react-table";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { type ComponentProps, useCallback, useMemo } from "react";
import type { Columns } from "~/components/data-table";
import { parseTenantParam, TENANT_PARAM, withTenant } from "~/lib/tenant-filter";
import { useSession } from "./session-context";

/** What a page needs to know of the tenant filter (issue 10: admins see all, with a filter). */
export interface TenantFilter {
  /** Whether the signed-in key may choose a tenant (admin keys; others always see their own). */
  selectable: boolean;
  /** The admin's chosen tenant (undefined: every tenant); for other keys, undefined. */
  tenant: string | undefined;
  /** Whether records of several tenants may be shown together (an admin viewing every tenant). */
  showTenant: boolean;
  /** Spread into an admin read's input: `{ tenant }` when one is chosen, else nothing. */
  input: { tenant?: string };
  /** `path` with the current tenant filter carried over (for links and navigation). */
  href(path: string): string;
}

/**
 * The tenant filter of this page, from `?tenant=` in the URL. Only admin sessions honour it: for other
 * keys the executor scopes every read to their own tenant, so a `tenant` parameter is ignored.
 */
export function useTenantFilter(): TenantFilter {
  const session = useSession();
  const params = useSearchParams();
  const selectable = session.role === "admin";
  const tenant = selectable ? parseTenantParam(params.get(TENANT_PARAM)) : undefined;
  const href = useCallback((path: string) => (selectable ? withTenant(path, tenant) : path), [selectable, tenant]);
  return useMemo(
    () => ({
      selectable,
      tenant,
      showTenant: selectable && tenant === undefined,
      input: tenant === undefined ? {} : { tenant },
      href,
    }),
    [selectable, tenant, href],
  );
}

/** A `next/link` to a path of the dashboard that keeps the admin's tenant filter. */
export function TenantLink({ href, ...props }: Omit<ComponentProps<typeof Link>, "href"> & { href: string }) {
  const filter = useTenantFilter();
  return <Link href={filter.href(href)} {...props} />;
}

/**
 * `columns` with a leading Tenant column when `show` (an admin viewing every tenant), for tables of
 * records that carry their `tenant`.
 */
export function withTenantColumn<T extends { tenant: string }>(columns: Columns<T>, show: boolean): Columns<T> {
  if (!show) return columns;
  const col = createColumnHelper<T>();
  const tenant = col.accessor((row) => row.tenant, { id: "tenant", header: "Tenant", meta: { testId: "tenant" } });
  return [tenant, ...columns];
}
