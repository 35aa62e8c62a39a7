import type { Metadata } from "next";
import { QueueView } from "~/components/queue/queue-view";

export const metadata: Metadata = { title: "Human queue" };

export default function QueuePage() {
  return <QueueView />;
}
