/**
 * `pnpm demo`: the executor service on the embedded default database (`.tristate/pgdata`; or
 * `DATABASE_URL`), fake remotes with faults, work replayed through the executor's HTTP API, a report
 * — and the service left running so the dashboard (and the API) show the results: UNKNOWN rates,
 * resolutions, the human queue. Stop it with Ctrl-C.
 *
 * With the τ-bench data (`TAU_BENCH_DATA_DIR`, default `examples/tau-bench/data`, the copy this repository carries) it replays τ-bench
 * tasks through Tristate and the two baselines (40 tasks; `--all` for all) with the example remotes'
 * faults (`TRISTATE_DEMO_FAULTS`, default `on`: about one write in five times out, resets or answers
 * 504 after its effect, resets before it, or lags; `--fault-rate R` instead: every τ-bench fault kind at rate R), prints
 * the three outcomes the executor recorded, and while it stays up replays one more task every
 * `--every` seconds (default 5; 0: none) so the dashboard's charts fill in over minutes.
 * Without it, the source design's worked example (a refund whose answer is lost, then an e-mail; an
 * SMS for the human queue) and the trip saga (hotel booked, flight refused, the hotel cancelled).
 *
 * It also starts the dashboard (`apps/web`, built once if needed) against the service.
 *
 *   pnpm demo [--all | --tasks N] [--fault-rate R] [--seed N] [--every S] [--port P] [--web-port P] [--no-dashboard] [--exit]
 */
import { parseArgs } from "node:util";
import { startFakeRemote, startTripServices, tripTools } from "@tristate/executor/demo-remotes";
import { emailTool, smsTool } from "@tristate/executor/demo-tools";
import { readEnv } from "@tristate/executor/env";
import { type RunningService, startService } from "@tristate/executor/service";
import { visibleSplits } from "../replay/cli.ts";
import { type ReplayEnvironment, startReplayEnvironment } from "../replay/environment.ts";
import { loadReplayTasks, replayTasks } from "../replay/replay.ts";
import { formatReport } from "../replay/report.ts";
import { databaseUrlSetting, tauBenchDataDir, tauBenchDataPresent } from "../settings.ts";
import { apiCall, printEnvelope } from "./api.ts";
import { type DemoDashboard, startDashboard } from "./dashboard.ts";
import { closeAndExit, demoDataDir, revokeKeys, stopSignal, stopWhenStarterExits } from "./lifecycle.ts";
import { demoFaultsFor, formatOutcomes, outcomeSummary, startTrickle, type Trickle } from "./traffic.ts";

const { values } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== "--"),
  options: {
    all: { type: "boolean", default: false },
    tasks: { type: "string", default: "40" },
    "fault-rate": { type: "string" },
    every: { type: "string", default: "5" },
    // Seed 1 shows a refused resend in the human queue (retail-train-27, rule 5f) beside NO_PROBE.
    seed: { type: "string", default: "1" },
    port: { type: "string", default: "4100" },
    "web-port": { type: "string", default: "3000" },
    "no-dashboard": { type: "boolean", default: false },
    exit: { type: "boolean", default: false },
  },
  strict: true,
});

if (!/^\d+(?:\.\d+)?$/.test(values.every)) {
  console.error(`--every: seconds between background tasks, a number ≥ 0 (0: none), not "${values.every}"`);
  process.exit(2);
}

function isAddressInUse(error: unknown): boolean {
  return (error as { code?: string })?.code === "EADDRINUSE";
}

async function dashboardFor(executorUrl: string): Promise<DemoDashboard | null> {
  if (values["no-dashboard"] || values.exit) return null;
  try {
    return await startDashboard(executorUrl, Number(values["web-port"]));
  } catch (error) {
    console.error(
      `the dashboard could not start (${error instanceof Error ? error.message : String(error)}); the API still runs`,
    );
    return null;
  }
}

function printAccess(url: string, adminKey: string | null, dashboard: DemoDashboard | null): void {
  console.log("");
  console.log(`Tristate executor API: ${url}  (tRPC under /trpc/, /healthz, /readyz)`);
  // The last 15 minutes: this run's calls, even when the demo's database holds older runs too.
  if (dashboard) console.log(`Dashboard: ${dashboard.url}/overview?range=15m  (sign in with the admin key)`);
  if (adminKey) console.log(`Admin API key (valid while the demo runs; revoked when it stops): ${adminKey}`);
  console.log("See the results in the dashboard, or:");
  if (adminKey) console.log(`  export TRISTATE_KEY=${adminKey}`);
  console.log(
    `  curl -s -H "Authorization: Bearer $TRISTATE_KEY" '${url}/trpc/queue.list'                  # the human queue`,
  );
  console.log(
    `  curl -s -H "Authorization: Bearer $TRISTATE_KEY" '${url}/trpc/stats.overview?input=%7B%22fromEpochMs%22%3A${Date.now() - 86_400_000}%2C%22toEpochMs%22%3A${Date.now() + 86_400_000}%7D'  # UNKNOWN rates, resolutions`,
  );
}

/**
 * Keeps the demo up until Ctrl-C or SIGTERM (unless `--exit`), then stops everything it started and
 * exits 0 (1 when stopping failed), so `pnpm demo` ends cleanly rather than by a signal.
 */
async function stayUp(close: () => Promise<void>): Promise<never> {
  if (!values.exit) {
    console.log("\nThe service keeps running with these results; Ctrl-C stops it.");
    const signal = await stopSignal();
    console.log(`\n${signal}: stopping the dashboard and the service…`);
  }
  return closeAndExit(close);
}

async function tauDemo(): Promise<void> {
  const dataDir = tauBenchDataDir();
  const visible = loadReplayTasks(visibleSplits(dataDir));
  let tasks = visible;
  if (!values.all) {
    // A quick mix: mostly retail, plus the airline tasks with bookings, cancellations and the certificate.
    const n = Number(values.tasks);
    const airlineAll = tasks.filter((t) => t.domain === "airline");
    // airline-test-16 issues a certificate, whose tool has no probe: its UNKNOWN waits in the human queue.
    const queued = airlineAll.filter((t) => t.id === "airline-test-16");
    const airline = [
      ...airlineAll.filter((t) => t.id !== "airline-test-16").slice(0, Math.max(0, Math.floor(n / 4) - queued.length)),
      ...queued,
    ];
    tasks = [...tasks.filter((t) => t.domain === "retail").slice(0, n - airline.length), ...airline];
  }
  console.log(`τ-bench data at ${dataDir}: replaying ${tasks.length} tasks (--all for every visible task)`);
  const chosen = new Set(tasks.map((t) => t.id));
  // While the demo stays up, the other tasks run one by one (the background trickle below).
  const later = values.exit ? [] : visible.filter((t) => !chosen.has(t.id));
  const seed = Number(values.seed);
  const demoFaults =
    values["fault-rate"] === undefined
      ? demoFaultsFor(process.env, seed)
      : { faults: { rate: Number(values["fault-rate"]), seed }, description: `--fault-rate ${values["fault-rate"]}` };
  console.log(`faults of the τ-bench services: ${demoFaults.description}`);
  const options = {
    faults: demoFaults.faults,
    maxInstances: tasks.length + later.length + 8,
    database: databaseUrlSetting() ? ("auto" as const) : ("default" as const),
    dataDir,
    embeddedDataDir: demoDataDir(),
  };
  let env: ReplayEnvironment;
  try {
    env = await startReplayEnvironment({ ...options, port: Number(values.port) });
  } catch (error) {
    if (!isAddressInUse(error)) throw error;
    env = await startReplayEnvironment({ ...options, port: 0 });
  }
  console.log(
    `executor at ${env.executorUrl} on ${env.databaseLabel}; τ-bench services with faults: ${JSON.stringify(env.faults)}`,
  );
  const startedAt = Date.now();
  const report = await replayTasks(env, tasks, {
    concurrency: 16,
    onTask: (done, total) => {
      if (done % 10 === 0 || done === total) process.stderr.write(`  ${done}/${total} tasks\n`);
    },
  });
  console.log(`\n${formatReport(report)}`);
  console.log(
    `\nThe executor's outcomes (intents.list): ${formatOutcomes(await outcomeSummary(env.executorUrl, env.adminKey, startedAt))}`,
  );
  const dashboard = await dashboardFor(env.executorUrl);
  printAccess(env.executorUrl, env.adminKey, dashboard);
  const everyMs = Number(values.every) * 1000;
  let trickle: Trickle | undefined;
  if (later.length && everyMs > 0) {
    console.log(
      `In the background: one more τ-bench task every ${values.every} s (${later.length} left), so the dashboard's charts fill in (--every 0: none).`,
    );
    trickle = startTrickle(later.length, everyMs, async (i) => {
      await replayTasks(env, [later[i]!], { concurrency: 1, replayId: `${report.replayId}-bg${i + 1}` });
    });
  }
  await stayUp(async () => {
    await trickle?.stop();
    await dashboard?.close();
    const revoked = await revokeKeys(env.executor.services.keys, [env.agentKey, env.adminKey]);
    console.log(`Revoked the demo's ${revoked} API keys.`);
    await env.close();
  });
}

async function workedExample(): Promise<void> {
  console.log(
    `No τ-bench data at ${tauBenchDataDir()} (set TAU_BENCH_DATA_DIR): the worked example and the trip saga.`,
  );
  const trip = await startTripServices();
  const mail = await startFakeRemote({ honorsKey: false });
  const sms = await startFakeRemote({ honorsKey: false });
  const tools = [...tripTools(trip), emailTool(mail.url), smsTool(sms.url)];
  let service: RunningService;
  const envFor = (port: number) =>
    readEnv({
      PORT: String(port),
      LOG_LEVEL: "warn",
      // The dashboard the demo starts runs on this machine and forwards each browser's address.
      TRISTATE_TRUSTED_PROXIES: "127.0.0.1,::1",
      ...(databaseUrlSetting() ? { DATABASE_URL: databaseUrlSetting() } : { TRISTATE_DATA_DIR: demoDataDir() }),
    });
  try {
    service = await startService(envFor(Number(values.port)), { tools });
  } catch (error) {
    if (!isAddressInUse(error)) throw error;
    service = await startService(envFor(0), { tools });
  }
  const agentKey = (await service.services.keys.create({ name: "demo agent", role: "agent" })).secret;
  const adminKey =
    service.firstAdminKey ?? (await service.services.keys.create({ name: "demo admin", role: "admin" })).secret;
  const call = (procedure: string, input: unknown) => apiCall(service.url, agentKey, procedure, input);
  const runId = `demo-${Date.now().toString(36)}`;

  console.log("\n— The worked example: a support agent refunds a broken order, then e-mails the customer —");
  trip.fault("refunds", { answer: "hang" });
  printEnvelope(
    "step 3: issue_refund — the payment service made the refund, its answer was lost",
    await call("calls.execute", {
      runId,
      stepId: "step-3",
      tool: "issue_refund",
      args: { order_id: "A-1182", amount: 49.9, currency: "EUR" },
      budgetMs: 45_000,
    }),
  );
  printEnvelope(
    "step 3 again, rephrased by the model (49.90 vs 49.9, lower-case id)",
    await call("calls.execute", {
      runId,
      stepId: "step-3",
      tool: "issue_refund",
      args: { order_id: "a-1182", amount: "49.90", currency: "eur" },
      budgetMs: 45_000,
    }),
  );
  printEnvelope(
    "step 4: send_email",
    await call("calls.execute", {
      runId,
      stepId: "step-4",
      tool: "send_email",
      args: { to: "customer@example.test", template_id: "refund-confirmed", order_id: "A-1182" },
      budgetMs: 45_000,
    }),
  );
  sms.fault({ answer: "reset" });
  printEnvelope(
    "step 5: send_sms — reset after the message was accepted; no probe exists → the human queue",
    await call("calls.execute", {
      runId,
      stepId: "step-5",
      tool: "send_sms",
      args: { phone: "+33 6 00 00 00 00", template_id: "refund-confirmed" },
      budgetMs: 45_000,
    }),
  );
  console.log(
    `  payments: ${trip.effects.refunds.length} refund(s) · mail: ${mail.effects.length} e-mail(s) · sms: ${sms.effects.length} (waits for an operator)`,
  );

  console.log("\n— The trip saga: hotel booked, the flight refused, the trip is off —");
  const tripRun = `${runId}-trip`;
  await call("runs.plan", {
    runId: tripRun,
    steps: [
      { stepId: "hotel", tool: "book_hotel" },
      { stepId: "flight", tool: "book_flight" },
      { stepId: "itinerary", tool: "send_itinerary" },
    ],
  });
  trip.fault("hotelBookings", { answer: 504 });
  printEnvelope(
    "hotel: book_hotel — a 504 after the booking was made",
    await call("calls.execute", {
      runId: tripRun,
      stepId: "hotel",
      tool: "book_hotel",
      args: { hotel_id: "H-LIS-7", guest_ref: "G-42", check_in: "2026-07-01", nights: 3 },
      budgetMs: 45_000,
    }),
  );
  trip.flightNoSeats = true;
  printEnvelope(
    "flight: book_flight — no seats",
    await call("calls.execute", {
      runId: tripRun,
      stepId: "flight",
      tool: "book_flight",
      args: { flight_no: "TP1234", passenger_ref: "G-42" },
      budgetMs: 45_000,
    }),
  );
  const abort = (await call("runs.abort", { runId: tripRun, budgetMs: 30_000 })) as { summary?: string };
  console.log(`\n▸ runs.abort: ${abort.summary ?? JSON.stringify(abort)}`);
  console.log(
    `  hotel bookings: ${trip.effects.hotelBookings.length}, cancellations: ${trip.effects.hotelCancellations.length}`,
  );

  const dashboard = await dashboardFor(service.url);
  printAccess(service.url, adminKey, dashboard);
  await stayUp(async () => {
    await dashboard?.close();
    const revoked = await revokeKeys(service.services.keys, [agentKey, adminKey]);
    console.log(`Revoked the demo's ${revoked} API keys.`);
    await service.close();
    await Promise.all([trip.close(), mail.close(), sms.close()]);
  });
}

stopWhenStarterExits();
(tauBenchDataPresent() ? tauDemo() : workedExample()).catch((error: unknown) => {
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
  console.error(error instanceof Error ? `${error.message}${cause}` : error);
  process.exit(1);
});
