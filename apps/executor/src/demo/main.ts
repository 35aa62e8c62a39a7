/**
 * The README's main command, until the service lands (issue 3): the source design's worked example
 * — a support agent refunds a broken order, then e-mails a confirmation — run through the real
 * executor on the embedded default database (PGlite in `.tristate/pgdata`; `DATABASE_URL` to use a
 * PostgreSQL server), against fake remote services on loopback that inject the faults.
 */
import { createExecutor, Deadline, type Envelope, sweepStale } from "@tristate/core";
import { openDatabase } from "@tristate/db";
import { startFakeRemote } from "./remotes/index.ts";
import { emailTool, refundTool, smsTool } from "./tools.ts";

const runId = `demo-${new Date().toISOString().replace(/[:.]/g, "-")}`;

function show(label: string, env: Envelope): void {
  const { status, retry_safe, replayed, attempt, resolution, action_taken, message, idempotency_key } = env;
  console.log(`\n▸ ${label}`);
  console.log(
    `  ${status}  retry_safe=${retry_safe}  replayed=${replayed}  attempt=${attempt}${resolution ? `  resolution=${resolution}` : ""}`,
  );
  console.log(`  key:     ${idempotency_key}`);
  console.log(`  effect:  ${env.effect}`);
  console.log(`  action:  ${action_taken}`);
  console.log(`  message: ${message}`);
}

async function main(): Promise<void> {
  const db = await openDatabase();
  const payments = await startFakeRemote({ honorsKey: true });
  const mail = await startFakeRemote({ honorsKey: false });
  const sms = await startFakeRemote({ honorsKey: false });
  const executor = createExecutor({
    store: db.store,
    tools: [refundTool(payments.url), emailTool(mail.url), smsTool(sms.url)],
    probe: { spacingMs: 500 },
  });
  console.log(`Tristate worked example — run ${runId}`);
  console.log(
    `intent log: ${db.embedded ? "embedded PostgreSQL (PGlite)" : "PostgreSQL"} at ${db.url.replace(/:[^:@/]*@/, ":***@")}`,
  );

  try {
    // One deadline per turn: 45 s for the whole "please refund my broken order" turn.
    const turn = Deadline.after(45_000);

    // Step 3: the payment service commits the refund, then its answer is lost (the read times out).
    payments.fault({ answer: "hang" });
    const refund = await executor.call({
      runId,
      stepId: "step-3",
      tool: "issue_refund",
      args: { order_id: "A-1182", amount: 49.9, currency: "EUR", reason: "arrived broken" },
      deadline: turn,
    });
    show("step 3: issue_refund — the answer was lost after the refund was made", refund);

    // The model, unsure, asks again with rephrased arguments: same identity, same key, replayed.
    const again = await executor.call({
      runId,
      stepId: "step-3",
      tool: "issue_refund",
      args: { order_id: "a-1182", amount: "49.90", currency: "eur", reason: "customer says the parcel was crushed" },
      deadline: turn,
    });
    show("step 3 again, rephrased by the model (49.90 vs 49.9, lower-case id, new reason)", again);

    // Step 4: the confirmation e-mail goes last (irreversible effects after every fallible step).
    const email = await executor.call({
      runId,
      stepId: "step-4",
      tool: "send_email",
      args: { to: "Customer@Example.test", template_id: "refund-confirmed", order_id: "A-1182" },
      deadline: turn,
    });
    show("step 4: send_email", email);

    // A tool with neither key support nor a probe: an UNKNOWN goes to the human queue.
    sms.fault({ answer: "reset" });
    const text = await executor.call({
      runId,
      stepId: "step-5",
      tool: "send_sms",
      args: { phone: "+33 6 00 00 00 00", template_id: "refund-confirmed" },
      deadline: turn,
    });
    show("step 5: send_sms — the connection reset after the message was accepted; no probe exists", text);

    const sweep = await sweepStale({ store: db.store, executor });
    console.log(`\nsweeper: ${sweep.taken} stale record(s) taken`);

    console.log("\nTimeline of the refund:");
    for (const e of await db.store.listEvents(refund.idempotency_key)) {
      console.log(`  ${new Date(e.atEpochMs).toISOString()}  ${e.type.padEnd(12)} ${JSON.stringify(e.data)}`);
    }
    console.log("\nWhat the remotes saw:");
    console.log(
      `  payments: ${payments.posts} POST, ${payments.effects.length} refund(s)   ← one refund, although the first answer was lost`,
    );
    console.log(`  mail:     ${mail.posts} POST, ${mail.effects.length} e-mail(s)`);
    console.log(
      `  sms:      ${sms.posts} POST, ${sms.effects.length} message(s)   ← waits for an operator, never resent`,
    );
  } finally {
    await Promise.all([payments.close(), mail.close(), sms.close()]);
    await db.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
