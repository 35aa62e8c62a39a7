import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * Starts `server` on 127.0.0.1 (`port` 0: any free port) for a fake remote, tracking its sockets so
 * `close` ends even kept-alive and hanging connections at once.
 * @returns the base URL (`http://127.0.0.1:<port>`) and `close`.
 */
export async function listenLoopback(server: Server, port = 0): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.listen(port, "127.0.0.1");
  await once(server, "listening");
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
