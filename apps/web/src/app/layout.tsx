import type { Metadata } from "next";
import { connection } from "next/server";
import type { ReactNode } from "react";
import "./globals.css";
import "./console.css";

export const metadata: Metadata = {
  title: { default: "Tristate", template: "%s · Tristate" },
  description: "Operations dashboard of the Tristate executor",
};

/**
 * Every page is rendered per request (`connection()`): Next.js puts the request's CSP nonce on its
 * scripts only then, and the policy lets no script without it run (`src/csp.ts`).
 */
export default async function RootLayout({ children }: { children: ReactNode }) {
  await connection();
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
