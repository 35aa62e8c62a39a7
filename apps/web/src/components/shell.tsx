"use client";

import { usePathname } from "next/navigation";
import { type ReactNode, useState } from "react";
import { QueueCount } from "./attention";
import { LiveProvider, LiveStatus } from "./live-refresh";
import { BellIcon } from "./notifications/bell-icon";
import { SearchBox } from "./search-box";
import { useSession } from "./session-context";
import { TenantLink } from "./tenant-filter";
import { TenantPicker } from "./tenant-picker";
import { TimeZoneScope } from "./time-zone-toggle";

const NAV = [
  { href: "/overview", label: "Overview" },
  { href: "/queue", label: "Human queue" },
  { href: "/stale", label: "Stale PENDING" },
  { href: "/runs", label: "Runs" },
  { href: "/intents", label: "Records" },
  { href: "/audit", label: "Audit log" },
  { href: "/confirm", label: "Confirm a call" },
  { href: "/notifications", label: "Notifications", adminOnly: true },
] as const;

/**
 * The frame of every signed-in page: navigation, search, the tenant (a filter for admins), who is
 * signed in, sign out (the Human queue tab counts the records waiting for a person; Notifications, a bell, is
 * listed for admin keys only); `banner` (the outage banner) sits between the header and the page; below it,
 * live refresh ("updated n s ago", Pause) and the local/UTC toggle for every time shown.
 */
export function Shell({ children, banner }: { children: ReactNode; banner?: ReactNode }) {
  const pathname = usePathname();
  const session = useSession();
  const [signingOut, setSigningOut] = useState(false);

  async function signOut() {
    setSigningOut(true);
    await fetch("/api/session", { method: "DELETE" }).catch(() => undefined);
    window.location.assign("/login");
  }

  return (
    <LiveProvider>
      <TimeZoneScope
        toggle={(zoneButton) => (
          <>
            <header className="topbar">
              <span className="brand">Tristate</span>
              <nav aria-label="Main">
                <ul>
                  {NAV.filter((item) => !("adminOnly" in item) || session.role === "admin").map((item) => (
                    <li key={item.href}>
                      <TenantLink
                        href={item.href}
                        title={item.href === "/notifications" ? item.label : undefined}
                        aria-current={
                          pathname === item.href || pathname.startsWith(`${item.href}/`) ? "page" : undefined
                        }
                      >
                        {item.href === "/notifications" ? (
                          <>
                            <BellIcon />
                            <span className="visually-hidden">{item.label}</span>
                          </>
                        ) : (
                          item.label
                        )}
                        {item.href === "/queue" ? <QueueCount /> : null}
                      </TenantLink>
                    </li>
                  ))}
                </ul>
              </nav>
              <SearchBox />
              <div className="who">
                <TenantPicker />
                <span className="who-name" title={`${session.name} (${session.role})`}>
                  {session.name} <span className="small">({session.role})</span>
                </span>
                <button type="button" onClick={signOut} disabled={signingOut}>
                  Sign out
                </button>
              </div>
            </header>
            {banner}
            <div className="statusbar">
              <LiveStatus />
              {zoneButton}
            </div>
          </>
        )}
      >
        <main id="main">{children}</main>
      </TimeZoneScope>
    </LiveProvider>
  );
}
