import type { Metadata } from "next";
import { NotificationsView } from "~/components/notifications/notifications-view";
import { ParamProblems } from "~/components/param-problems";
import { DELIVERY_STATUSES } from "~/lib/notifications";
import { firstValues, type SearchParams } from "~/lib/search-params";
import { COMMON_PARAMS, checkParams, type ParamRule, withoutProblems } from "~/lib/url-params";

export const metadata: Metadata = { title: "Notifications" };

/** The page's URL parameters: the tenant, and the delivery log's channel and status filters. */
const NOTIFICATIONS_PARAMS: Record<string, ParamRule> = {
  tenant: COMMON_PARAMS.tenant,
  channel: { kind: "text", maxLength: 200 },
  status: { kind: "oneOf", values: DELIVERY_STATUSES },
};

/** Notifications (admins): channels, the new-channel form, the delivery log; other parameters are named as ignored. */
export default async function Page({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const params = firstValues(await searchParams);
  const problems = checkParams(params, NOTIFICATIONS_PARAMS);
  const kept = withoutProblems(params, problems);
  return (
    <>
      <ParamProblems problems={problems} path="/notifications" kept={kept} />
      <NotificationsView params={kept} />
    </>
  );
}
