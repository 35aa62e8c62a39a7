import type { Metadata } from "next";
import { LoginForm } from "~/components/login-form";

export const metadata: Metadata = { title: "Sign in" };

/** Only same-site paths may follow a login. */
function safeNext(value: string | string[] | undefined): string {
  const next = Array.isArray(value) ? value[0] : value;
  return next?.startsWith("/") && !next.startsWith("//") ? next : "/overview";
}

export default async function LoginPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  return (
    <main className="login">
      <h1>Tristate operations</h1>
      <div className="panel">
        <p className="muted">Sign in with an API key of role viewer, operator or admin.</p>
        <LoginForm next={safeNext(params.next)} />
      </div>
    </main>
  );
}
