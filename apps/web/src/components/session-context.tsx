"use client";

import { createContext, type ReactNode, useContext } from "react";
import { canOperate } from "~/lib/status";
import type { Session } from "~/trpc/types";

const SessionContext = createContext<Session | null>(null);

/** Makes the signed-in key's name and role known to the pages. */
export function SessionProvider({ session, children }: { session: Session; children: ReactNode }) {
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

/** The signed-in key's id, name and role. */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside SessionProvider");
  return session;
}

/** Whether the signed-in key may act on records (operator or admin). */
export function useCanOperate(): boolean {
  return canOperate(useSession().role);
}
