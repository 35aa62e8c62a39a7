import { headers } from "next/headers";
import type { ReactNode } from "react";
import { OutageBanner } from "~/components/outage-banner";
import { SessionProvider } from "~/components/session-context";
import { Shell } from "~/components/shell";
import { executorHealth } from "~/server/executor-health";
import { requireSession } from "~/server/session";
import { PATH_HEADER } from "~/server/session-cookie";
import { Providers } from "~/trpc/react";

export const dynamic = "force-dynamic";

/**
 * Signed-in pages: the session is checked with the executor on every page load. When the executor
 * cannot be reached the page still renders (last confirmed session, outage banner, last data).
 */
export default async function DashboardLayout({ children }: { children: ReactNode }) {
  const path = (await headers()).get(PATH_HEADER) ?? "/overview";
  const { session, unconfirmed } = await requireSession(path);
  return (
    <Providers>
      <SessionProvider session={session}>
        <Shell
          banner={
            <OutageBanner
              initialDownSinceEpochMs={executorHealth().downSinceEpochMs}
              sessionUnconfirmed={unconfirmed}
            />
          }
        >
          {children}
        </Shell>
      </SessionProvider>
    </Providers>
  );
}
