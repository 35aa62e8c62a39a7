import type { Metadata } from "next";
import { IntentView } from "~/components/intent/intent-view";
import { env } from "~/env";

export const metadata: Metadata = { title: "Intent record" };

export default async function IntentPage({ params }: { params: Promise<{ key: string }> }) {
  const { key } = await params;
  return <IntentView intentKey={decodeURIComponent(key)} traceUrlTemplate={env.TRACE_URL_TEMPLATE} />;
}
