/**
 * `pnpm chaos`: the crash campaign. Prints one line per round and a summary; exit 0 when every
 * check stayed at 0, 1 on a violation (the reproduction is written), 2 on bad options, 3 when
 * `--kills` was not reached in `--minutes`.
 */
import { runCampaign } from "./campaign.ts";
import { violationCount } from "./checker.ts";
import { killsTarget } from "./db-stall.ts";
import { deadlineFailures } from "./deadline-checks.ts";
import { notifyKillLines, runNotifyKill } from "./notify-kill.ts";
import { type CampaignOptions, CHAOS_USAGE, parseChaosArgs } from "./options.ts";
import { roundLine, summaryText, writeJson, writeRepro } from "./report.ts";

async function main(): Promise<number> {
  const argv = process.argv.slice(2).filter((a) => a !== "--");
  // `--scenario notify-kill`: the short notification scenario instead of the campaign (issue 23 §3).
  if (argv[0] === "--scenario" && argv[1] === "notify-kill" && argv.length === 2) {
    const report = await runNotifyKill();
    for (const line of notifyKillLines(report)) console.log(line);
    return report.ok ? 0 : 1;
  }
  let options: CampaignOptions;
  try {
    const parsed = parseChaosArgs(argv);
    if ("help" in parsed) {
      console.log(CHAOS_USAGE);
      return 0;
    }
    options = parsed;
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${CHAOS_USAGE}`);
    return 2;
  }
  console.log(
    `chaos: seed ${options.seed}, ${options.replicas} replica(s), faults ${options.faults.join(",")}, ` +
      `${options.minutes} min${options.kills ? ` or ${options.kills} of each kind` : ""}, ${options.concurrency} tasks per round`,
  );
  const report = await runCampaign(options, (round) => console.log(roundLine(round)));
  const notes: string[] = [];
  const failedRound = report.rounds.find(
    (r) =>
      violationCount(r.violations) + deadlineFailures(r.deadlines) > 0 ||
      !r.planted.duplicate ||
      !r.planted.gap ||
      !r.planted.abort,
  );
  let code = 0;
  if (failedRound) {
    writeRepro(options.repro, report, failedRound);
    notes.push(`round ${failedRound.round} failed; reproduction: ${options.repro}`);
    for (const d of failedRound.details.slice(0, 20)) notes.push(`  ${d}`);
    code = 1;
  }
  const short =
    options.kills !== undefined
      ? options.faults.filter((k) => report.counts.fired[k] < killsTarget(k, options.kills ?? 0, options.minutes))
      : [];
  if (!failedRound && short.length) {
    notes.push(
      `--kills ${options.kills} not reached in ${options.minutes} min: ${short.map((k) => `${k} ${report.counts.fired[k]}`).join(", ")}`,
    );
    code = 3;
  }
  if (options.json) {
    writeJson(options.json, report);
    notes.push(`report: ${options.json}`);
  }
  console.log(summaryText(report, code === 0, notes));
  return code;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
