import { NextResponse } from "next/server";
import { checkExecutor } from "~/server/executor-health";

export const dynamic = "force-dynamic";

/**
 * `GET /api/health` → whether the executor answers now (`{ up, downSinceEpochMs, checkedAtEpochMs }`),
 * for the outage banner. Says nothing but up or down, so it needs no session.
 */
export async function GET(): Promise<NextResponse> {
  return NextResponse.json(await checkExecutor(), { headers: { "cache-control": "no-store" } });
}
