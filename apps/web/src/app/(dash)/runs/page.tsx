import type { Metadata } from "next";
import { RunsList } from "~/components/lists/runs-list";
import { firstValues, type SearchParams } from "~/lib/search-params";

export const metadata: Metadata = { title: "Runs" };

export default async function RunsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  return (
    <>
      <h1>Runs</h1>
      <p className="muted small">
        Agent runs that started in the time range (the last 24 hours unless you pick another), newest first: status,
        start, duration, tools, UNKNOWNs and steps waiting for a person. A run's page shows its steps in order; to open
        a run by its id, type the id in Search at the top.
      </p>
      <RunsList params={firstValues(await searchParams)} initialNowEpochMs={Date.now()} />
    </>
  );
}
