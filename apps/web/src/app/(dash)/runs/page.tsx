import type { Metadata } from "next";
import { RecentRuns } from "~/components/lists/recent-runs";
import { RunSearch } from "~/components/lists/run-search";

export const metadata: Metadata = { title: "Runs" };

export default function RunsPage() {
  return (
    <>
      <h1>Runs</h1>
      <p className="muted small">An agent run's steps in order, with their outcomes and compensations.</p>
      <RunSearch />
      <RecentRuns />
    </>
  );
}
