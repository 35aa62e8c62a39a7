/**
 * What the three examples share: a local executor with a refund remote that loses its first answer,
 * the customer's request, the model's arguments, and the printed ending.
 */
import { createTristateClient, type TristateClient } from "@tristate/client";
import { type LocalStack, startLocalStack } from "@tristate/local-stack";

/** The customer's request. */
export const REQUEST = "Order A-1182 arrived broken. Please refund the 49.90 EUR.";
/** The scripted model's first call. */
export const FIRST_ARGS = { order_id: "A-1182", amount: 49.9, currency: "EUR", reason: "arrived broken" };
/** Its retry after the UNKNOWN, worded differently (the same refund: the same identity). */
export const RETRY_ARGS = { order_id: "a-1182", amount: "49.90", currency: "EUR", reason: "broken on arrival" };

/** A started story: the stack, a client with an agent key, and a log line printer. */
export interface Story {
  stack: LocalStack;
  client: TristateClient;
  log(line: string): void;
  /** Prints what the remote did and stops everything; exits 1 if there was not exactly one refund. */
  end(): Promise<void>;
}

/**
 * Starts the executor on the embedded database (PGlite in a temporary directory; `--postgres` uses
 * a fresh database on the local PostgreSQL instead), with the refund remote's first answer lost.
 */
export async function startStory(title: string): Promise<Story> {
  const database = process.argv.includes("--postgres") ? "postgres" : "embedded";
  console.log(`${title}\n(starting the executor on the ${database} database…)`);
  const stack = await startLocalStack({ database });
  const client = createTristateClient({ url: stack.url, apiKey: stack.agentKey });
  stack.loseNextAnswer();
  console.log(`executor at ${stack.url}; the refund service will commit the first refund and lose its answer\n`);
  return {
    stack,
    client,
    log: (line) => console.log(line),
    async end() {
      const refunds = stack.remote.effects.length;
      console.log(`\nrefund service: ${refunds} refund(s) made, ${stack.remote.posts} request(s) received`);
      await stack.close();
      if (refunds !== 1) {
        console.error("expected exactly one refund");
        process.exitCode = 1;
      }
    },
  };
}

/** One line for an envelope the model read. */
export function describeEnvelope(envelope: { status: string; retry_safe: boolean; message: string }): string {
  return `${envelope.status} (retry_safe: ${envelope.retry_safe}) — ${envelope.message}`;
}
