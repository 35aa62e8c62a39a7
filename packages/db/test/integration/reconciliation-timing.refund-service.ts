/**
 * A refund service for the issue 9 §2 tests (reconciliation-timing-evidence.test.ts): a payment
 * provider whose idempotency-key store "missed" a key, over a real loopback socket.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type AnyTool, callHttp, canon, defineTool } from "@tristate/core";
import { refundArgs } from "@tristate/testing";

/**
 * A payment provider's refund endpoint whose idempotency-key store "missed" a key: it refuses a second
 * refund of the same order and amount with 400 "already refunded", and its lookup by client reference
 * finds nothing (the key index lost the entry). The first POST can fail after committing: `reset`
 * (RST before the answer), `504`, or `reset-then-down` (and the service stops listening, so the next
 * connection is refused).
 */
export interface RefundService {
  readonly url: string;
  readonly refunds: { id: string; order_id: string; amount: string; clientRef: string | null }[];
  /** Status (or "reset") of every POST, in order. */
  readonly answers: (number | "reset")[];
  close(): Promise<void>;
}

export async function startRefundService(firstFailure: "reset" | 504 | "reset-then-down"): Promise<RefundService> {
  const refunds: RefundService["refunds"] = [];
  const answers: RefundService["answers"] = [];
  let down = false;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const json = (status: number, body: unknown) => {
        answers.push(status);
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      };
      if (req.method === "GET") return res.writeHead(200, { "content-type": "application/json" }).end("[]");
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { order_id: string; amount: string };
      const amount = canon.decimal(2)(body.amount, "amount");
      if (refunds.some((r) => r.order_id === body.order_id && r.amount === amount)) {
        return json(400, { error: "already refunded", order_id: body.order_id });
      }
      const clientRef = (req.headers["idempotency-key"] as string | undefined) ?? null;
      const refundRow = { id: `re_${refunds.length + 1}`, order_id: body.order_id, amount, clientRef };
      refunds.push(refundRow);
      if (refunds.length > 1) return json(201, refundRow);
      if (firstFailure === 504) return json(504, { error: "gateway timeout" });
      answers.push("reset");
      if (firstFailure === "reset-then-down") {
        down = true;
        server.close();
      }
      req.socket.resetAndDestroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    refunds,
    answers,
    close: async () => {
      server.closeAllConnections();
      if (!down) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A refund tool against {@link RefundService}: `keyed` (idempotent_by_key, with its key probe or none) or `unsafe` without probes. */
export function serviceRefund(service: RefundService, kind: "keyed" | "keyed-no-probe" | "unsafe-no-probe"): AnyTool {
  return defineTool({
    name: "issue_refund",
    kind: kind === "unsafe-no-probe" ? "unsafe" : "idempotent_by_key",
    args: refundArgs,
    identity: { order_id: canon.upper, amount: canon.decimal(2) },
    timeoutMs: 500,
    invoke: async (args, ctx) =>
      (await callHttp(ctx, { method: "POST", url: `${service.url}/refunds`, body: args })).body,
    ...(kind === "keyed"
      ? {
          probe: async (_args: unknown, ctx: { clientRef: string; signal: AbortSignal; timeoutMs: number }) => {
            const res = await callHttp(ctx, {
              method: "GET",
              url: `${service.url}/refunds?clientRef=${encodeURIComponent(ctx.clientRef)}`,
            });
            return (res.body as unknown[])[0] ?? null;
          },
        }
      : {}),
  });
}
