/**
 * Attack on issue 21 §1 ("budgetMs counts from the request's arrival") through the service: the
 * request's head arrives, then its body trickles in over 3 s on a keep-alive connection. A 4 s budget
 * then has 1 s left when the call can start — less than the reserve and the least budget a send may
 * start with. What must hold: nothing reaches the remote; the agent is told FAILED_NO_EFFECT
 * `DEADLINE_EXCEEDED` (nothing was sent, `retry_safe`). A second request on the same connection gets
 * its own arrival (a full budget), and is done once.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StalledStack, startStalledStack } from "./stalled-stack.ts";

let stack: StalledStack;
beforeAll(async () => {
  stack = await startStalledStack();
});
afterAll(async () => {
  await stack?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("attack 21: a body that trickles in, on a keep-alive connection", () => {
  it("the budget counts from the head's arrival: nothing sent; the next request on the connection has its own", async () => {
    const { port } = new URL(stack.service.url);
    const socket = connect(Number(port), "127.0.0.1");
    await new Promise((r) => socket.once("connect", r));
    let received = "";
    socket.setEncoding("utf8").on("data", (c: string) => {
      received += c;
    });
    const request = (body: string) =>
      [
        "POST /trpc/calls.execute HTTP/1.1",
        "host: 127.0.0.1",
        "content-type: application/json",
        `authorization: Bearer ${stack.agentKey}`,
        `content-length: ${Buffer.byteLength(body)}`,
        "connection: keep-alive",
        "",
        "",
      ].join("\r\n");
    const body = (step: string) =>
      JSON.stringify({
        runId: "run-trickle",
        stepId: step,
        tool: "issue_refund",
        args: { order_id: `T-${step}`, amount: 10, currency: "EUR", reason: "trickle" },
        budgetMs: 4000,
      });
    const postsBefore = stack.remote.posts;
    const slow = body("slow");
    socket.write(request(slow));
    for (let i = 0; i < slow.length; i += Math.ceil(slow.length / 6)) {
      socket.write(slow.slice(i, i + Math.ceil(slow.length / 6)));
      await sleep(500);
    }
    while (!/\r\n\r\n[\s\S]*\}\s*$/.test(received)) await sleep(20);
    const first = received;
    expect(first).toMatch(/"status":"FAILED_NO_EFFECT"/);
    expect(first).toMatch(/"code":"DEADLINE_EXCEEDED"/);
    expect(stack.remote.posts, "nothing sent for the trickled call").toBe(postsBefore);

    received = "";
    socket.write(request(body("quick")) + body("quick"));
    while (!/\r\n\r\n[\s\S]*\}\s*$/.test(received)) await sleep(20);
    expect(received).toMatch(/"status":"SUCCEEDED"/);
    expect(stack.remote.posts).toBe(postsBefore + 1);
    socket.destroy();
  }, 30_000);
});
