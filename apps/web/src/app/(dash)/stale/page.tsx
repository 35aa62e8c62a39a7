import type { Metadata } from "next";
import { StaleView } from "~/components/lists/stale-view";

export const metadata: Metadata = { title: "Stale PENDING" };

export default function StalePage() {
  return <StaleView />;
}
