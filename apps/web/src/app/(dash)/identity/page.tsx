import type { Metadata } from "next";
import { IdentityView } from "~/components/lists/identity-view";
import { firstValues, type SearchParams } from "~/lib/search-params";

export const metadata: Metadata = { title: "Records by identity" };

/** `/identity?value=A-1182[&tool=…][&cursor=…]`: the records whose business identity holds the value. */
export default async function IdentityPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  return <IdentityView params={firstValues(await searchParams)} />;
}
