import type { Metadata } from "next";
import { OverviewView } from "~/components/overview/overview-view";
import { firstValues, type SearchParams } from "~/lib/search-params";

export const metadata: Metadata = { title: "Overview" };

export default async function OverviewPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  return <OverviewView params={firstValues(await searchParams)} initialNowEpochMs={Date.now()} />;
}
