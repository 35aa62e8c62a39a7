/**
 * A switchable HTTP relay between the web app and the executor, so tests can take the executor
 * away from the dashboard and bring it back (issue 14: the outage banner) without stopping it. While
 * closed, every connection is reset before anything is read, as a stopped executor's port would.
 */
import { once } from "node:events";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** The relay: its URL, the switch and its close. */
export interface ExecutorGate {
  url: string;
  /** Whether requests reach the executor. */
  open: boolean;
  close(): Promise<void>;
}

/** Starts a relay on loopback to `targetUrl` (an `http://host:port` base), open. */
export async function startExecutorGate(targetUrl: string): Promise<ExecutorGate> {
  const target = new URL(targetUrl);
  const gate = { open: true } as ExecutorGate;
  const server: Server = createServer((req, res) => {
    if (!gate.open) {
      req.socket.destroy();
      return;
    }
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => req.socket.destroy());
    req.pipe(upstream);
  });
  server.on("connection", (socket) => {
    if (!gate.open) socket.destroy();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  gate.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gate.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return gate;
}
