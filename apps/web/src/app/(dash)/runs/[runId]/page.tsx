import type { Metadata } from "next";
import { RunView } from "~/components/lists/run-view";

export const metadata: Metadata = { title: "Run" };

export default async function RunPage({ params }: { params: Promise<{ runId: string }> }) {
  const { runId } = await params;
  return <RunView runId={decodeURIComponent(runId)} />;
}
