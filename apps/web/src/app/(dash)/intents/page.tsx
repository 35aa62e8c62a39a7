import type { Metadata } from "next";
import { IntentsListView } from "~/components/lists/intents-list-view";
import { firstValues, type SearchParams } from "~/lib/search-params";

export const metadata: Metadata = { title: "Intent records" };

export default async function IntentsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  return <IntentsListView params={firstValues(await searchParams)} initialNowEpochMs={Date.now()} />;
}
