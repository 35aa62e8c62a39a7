import type { Metadata } from "next";
import { ConfirmCallView } from "~/components/confirm/confirm-call";
import { ParamProblems } from "~/components/param-problems";
import { firstValues, type SearchParams } from "~/lib/search-params";
import { COMMON_PARAMS, checkParams, withoutProblems } from "~/lib/url-params";

export const metadata: Metadata = { title: "Confirm a call" };

/** The page takes only the tenant filter from the URL; anything else is named as ignored. */
export default async function Page({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const params = firstValues(await searchParams);
  const problems = checkParams(params, { tenant: COMMON_PARAMS.tenant });
  return (
    <>
      <ParamProblems problems={problems} path="/confirm" kept={withoutProblems(params, problems)} />
      <ConfirmCallView />
    </>
  );
}
