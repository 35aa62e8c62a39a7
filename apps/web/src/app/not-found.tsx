import Link from "next/link";

export default function NotFound() {
  return (
    <main>
      <h1>Not found</h1>
      <div className="empty">
        <strong>Nothing here</strong>
        <p className="muted">
          This page does not exist. <Link href="/overview">Go to the overview</Link>.
        </p>
      </div>
    </main>
  );
}
