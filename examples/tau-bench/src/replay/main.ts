/**
 * `pnpm tau:replay`: replays τ-bench tasks with injected faults through Tristate and two baselines,
 * scores final states against the oracle, prints a table and writes the JSON report.
 *
 * pnpm tau:replay --tasks FILE --oracle FILE [--tasks FILE --oracle FILE …] --fault-rate 0.2 --seed 1
 *   --report out.json [--limit N] [--concurrency K] [--fault-mix refuse=1,503=1,…|lag-heavy] [--lag-ms N]
 *   [--lag-response ok|504|hang] [--hang-ms N] [--unbounded-lag] [--service-port N] [--executor-port N]
 *   [--abort-share R] [--db auto|embedded|test]   (see REPLAY_USAGE)
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseReplayArgs, REPLAY_USAGE } from "./cli.ts";
import { startReplayEnvironment } from "./environment.ts";
import { loadReplayTasks, replayTasks } from "./replay.ts";
import { formatReport, formatSettle } from "./report.ts";

async function main(): Promise<void> {
  let args: ReturnType<typeof parseReplayArgs>;
  try {
    args = parseReplayArgs(process.argv.slice(2).filter((a) => a !== "--"));
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${REPLAY_USAGE}`);
    process.exit(2);
  }
  if ("help" in args) {
    console.log(REPLAY_USAGE);
    return;
  }
  let tasks: ReturnType<typeof loadReplayTasks>;
  try {
    tasks = loadReplayTasks(args.sources);
  } catch (error) {
    console.error(
      `cannot read the tasks: ${error instanceof Error ? error.message : String(error)}\n\n${REPLAY_USAGE}`,
    );
    process.exit(2);
  }
  if (args.limit !== undefined) tasks = tasks.slice(0, args.limit);
  console.error(`loaded ${tasks.length} tasks from ${args.sources.map((s) => s.tasks).join(", ")}`);
  const env = await startReplayEnvironment({
    faults: args.faults,
    maxInstances: tasks.length + 8,
    database: args.database,
    dataDir: args.dataDir,
    port: args.executorPort,
    servicePort: args.servicePort,
    unboundedLag: args.unboundedLag,
  });
  console.error(`executor at ${env.executorUrl} on ${env.databaseLabel}`);
  console.error(
    `domain services: Tristate ${env.serviceUrls.tristate}, retry on any error ${env.serviceUrls.retry_any}, never retry ${env.serviceUrls.never_retry}`,
  );
  console.error(`settle windows: ${formatSettle(env.settleMs)}`);
  // Ctrl-C or a SIGTERM stops the services and the executor and drops the replay's database.
  const interrupted = (signal: NodeJS.Signals) => {
    stopping = true;
    console.error(`${signal}: stopping the replay`);
    env.close().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  try {
    const report = await replayTasks(env, tasks, {
      concurrency: args.concurrency,
      ...(args.abortShare > 0 ? { abort: { share: args.abortShare, seed: args.faults.seed ?? 1 } } : {}),
      onTask: (done, total) => {
        if (done % 20 === 0 || done === total) console.error(`  ${done}/${total} tasks`);
      },
    });
    console.log(formatReport(report));
    if (args.report) {
      writeFileSync(resolve(args.cwd, args.report), `${JSON.stringify(report, null, 2)}\n`);
      console.log(`\nreport written to ${resolve(args.cwd, args.report)}`);
    }
    const ok =
      report.targets.probeableAllMatched &&
      report.targets.zeroDuplicates &&
      report.targets.everyUnmatchedInHumanQueue &&
      report.targets.abortedRunsCorrect;
    process.exitCode = ok ? 0 : 1;
  } finally {
    await env.close();
  }
}

/** True once a signal asked the replay to stop: the tasks cut short then fail quietly. */
let stopping = false;

main().catch((error: unknown) => {
  if (stopping) return; // the signal handler exits once everything is closed
  console.error(error);
  process.exit(1);
});
