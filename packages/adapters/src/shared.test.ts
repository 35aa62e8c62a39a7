import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createTristateClient, TristateUnauthorizedError } from "@tristate/client";
import { describe, expect, it } from "vitest";
import { runTool, selectTools } from "./shared.ts";

const call = { tool: "issue_refund", args: { order_id: "A-1" }, toolCallId: "c1" };

describe("runTool: what the model reads when the executor gives no envelope", () => {
  it("an executor that cannot be reached → FAILED_NO_EFFECT envelope, retry_safe true; nothing was sent", async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    await new Promise((r) => server.close(r));
    const client = createTristateClient({ url: `http://127.0.0.1:${port}`, apiKey: "k" });
    const envelope = await runTool(client, { runId: "r" }, call);
    expect(envelope).toMatchObject({
      status: "FAILED_NO_EFFECT",
      retry_safe: true,
      error: { code: "EXECUTOR_NOT_CONNECTED" },
    });
  });

  it("a call read by the executor and then cut off → UNKNOWN envelope saying to repeat the same call; no step is sent (the executor derives it)", async () => {
    let body = "";
    const server = createServer((req) => {
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => req.socket.resetAndDestroy());
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const client = createTristateClient({
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      apiKey: "k",
    });
    const envelope = await runTool(client, { runId: "r", deadlineEpochMs: () => 1_900_000_000_000 }, call);
    server.close();
    expect(envelope).toMatchObject({ status: "UNKNOWN", retry_safe: true });
    expect(envelope.message).toContain("repeat the same call: the executor replays or reconciles");
    const sent = JSON.parse(body);
    expect(sent).toMatchObject({ runId: "r", tool: "issue_refund", deadlineEpochMs: 1_900_000_000_000 });
    // No stepId: the executor takes the tool and the arguments' identity as the step.
    expect(sent).not.toHaveProperty("stepId");
  });

  it("a problem of the agent's setup (401) is thrown, not shown to the model", async () => {
    const server = createServer((_req, res) =>
      res
        .writeHead(401, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { message: "bad key", data: { code: "UNAUTHORIZED", httpStatus: 401 } } })),
    );
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const client = createTristateClient({
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      apiKey: "k",
    });
    await expect(runTool(client, { runId: "r" }, call)).rejects.toBeInstanceOf(TristateUnauthorizedError);
    await expect(selectTools(client, { runId: "r", catalog: [], only: ["nope"] })).rejects.toThrow(
      /not in the executor's catalog/,
    );
    server.close();
  });
});
