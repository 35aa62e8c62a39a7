import type { Metadata } from "next";
import { LoginForm } from "~/components/login-form";
import { safeNext } from "~/server/request-guard";

export const metadata: Metadata = { title: "Sign in" };

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
        <LoginForm
          next={safeNext(params.next)}
          failed={
            params.failed === "unreachable"
              ? "The executor could not be reached, so nobody can sign in right now. Try again in a moment."
              : params.failed === "1"
                ? "This API key could not sign in: it is invalid, revoked or of role agent."
                : null
          }
        />
      </div>
    </main>
  );
}
