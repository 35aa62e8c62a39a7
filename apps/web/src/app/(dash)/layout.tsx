import { headers } from "next/headers";
import type { ReactNode } from "react";
import { SessionProvider } from "~/components/session-context";
import { Shell } from "~/components/shell";
import { requireSession } from "~/server/session";
import { PATH_HEADER } from "~/server/session-cookie";
import { Providers } from "~/trpc/react";

export const dynamic = "force-dynamic";

/** Signed-in pages: the key is checked with the executor on every page load. */
export default async function DashboardLayout({ children }: { children: ReactNode }) {
  const path = (await headers()).get(PATH_HEADER) ?? "/overview";
  const session = await requireSession(path);
  return (
    <Providers>
      <SessionProvider session={session}>
        <Shell>{children}</Shell>
      </SessionProvider>
    </Providers>
  );
}
