import type { Metadata } from "next";
import { RunView } from "~/components/lists/run-view";
import { RUN_ID_IN_QUERY } from "~/lib/search";

export const metadata: Metadata = { title: "Run" };

/** `/runs/<id>`, or `/runs/%20?id=<id>` for the ids `.` and `..` (`runPath`). */
export default async function RunPage({
  params,
  searchParams,
}: {
  params: Promise<{ runId: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const runId = decodeURIComponent((await params).runId);
  const inQuery = (await searchParams).id;
  return <RunView runId={runId === RUN_ID_IN_QUERY && typeof inQuery === "string" ? inQuery : runId} />;
}
