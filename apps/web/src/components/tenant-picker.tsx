"use client";

import { useQuery } from "@tanstack/react-query";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { withTenant } from "~/lib/tenant-filter";
import { useTRPC } from "~/trpc/react";
import { useOutageSince } from "./outage-state";
import { useSession } from "./session-context";
import { useTenantFilter } from "./tenant-filter";

/** The id of the tenant select (its label points at it). */
const PICKER_ID = "tenant-filter";

/**
 * The header's tenant: a select of every tenant (`tenants.list`) for admin sessions, which sets
 * `?tenant=` on the current page (empty: all tenants); for other keys, their own tenant as text.
 */
export function TenantPicker() {
  const session = useSession();
  const filter = useTenantFilter();
  if (!filter.selectable) {
    return (
      <span className="tenant-name">
        Tenant <strong data-testid="session-tenant">{session.tenant}</strong>
      </span>
    );
  }
  return <AdminTenantSelect current={filter.tenant} />;
}

function AdminTenantSelect({ current }: { current: string | undefined }) {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const tenants = useQuery({ ...trpc.tenants.list.queryOptions(), staleTime: 60_000 });
  const outage = useOutageSince() !== null;
  const names = tenants.data?.tenants ?? [];
  // A tenant named in the URL stays selectable while the list loads (or if it has no key any more).
  const options = current !== undefined && !names.includes(current) ? [current, ...names] : names;

  function choose(value: string) {
    const query = params.toString();
    router.push(withTenant(`${pathname}${query ? `?${query}` : ""}`, value || undefined));
  }

  return (
    <span className="tenant-picker">
      <label htmlFor={PICKER_ID}>Tenant</label>
      <select
        id={PICKER_ID}
        value={current ?? ""}
        onChange={(event) => choose(event.currentTarget.value)}
        aria-describedby={tenants.error ? "tenant-filter-error" : undefined}
      >
        <option value="">All tenants</option>
        {options.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
      {tenants.error && outage ? (
        // Part of the outage the banner reports, not an error of its own.
        <span id="tenant-filter-error" className="small muted">
          {names.length ? "(last list: the executor is unreachable)" : "(no list while the executor is unreachable)"}
        </span>
      ) : tenants.error ? (
        <span id="tenant-filter-error" role="alert" className="search-error">
          Could not load the tenants.
        </span>
      ) : null}
    </span>
  );
}
