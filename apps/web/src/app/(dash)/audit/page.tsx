import type { Metadata } from "next";
import { AuditView } from "~/components/lists/audit-view";
import { firstValues, type SearchParams } from "~/lib/search-params";

export const metadata: Metadata = { title: "Audit log" };

export default async function AuditPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  return <AuditView params={firstValues(await searchParams)} />;
}
