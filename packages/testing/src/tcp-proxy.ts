/**
 * A TCP proxy a test or the chaos campaign starts between a client and a real server (PostgreSQL,
 * a remote), to make the network between them misbehave the way a fault review saw it: forwarding
 * stopped with every connection left open (a stalled database, a black-holed route), or every
 * connection reset. Nothing is mocked: bytes pass through unchanged while it forwards.
 * @module
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";

/** A running proxy (see {@link startTcpProxy}). */
export interface TcpProxy {
  /** The loopback port clients connect to. */
  readonly port: number;
  /** Connections open now (client side). */
  connections(): number;
  /** True while forwarding is stopped. */
  stalled(): boolean;
  /**
   * Stops forwarding in both directions: open connections stay open and nothing they send is
   * passed on (it waits in the proxy); new connections are accepted and held. Idempotent.
   */
  stall(): void;
  /** Forwards again: what waited is passed on in order, held connections reach the server. */
  resume(): void;
  /** {@link stall} for `ms`, then {@link resume}. Resolves when forwarding resumed. */
  stallFor(ms: number): Promise<void>;
  /** Destroys every open connection (both sides), as a reset would; the proxy keeps listening. */
  resetAll(): void;
  /** Stops listening and destroys every connection. */
  close(): Promise<void>;
}

/** Options of {@link startTcpProxy}. */
export interface TcpProxyOptions {
  /** The server's host. @default "127.0.0.1" */
  targetHost?: string;
  targetPort: number;
  /** Port to listen on (0: any free port). @default 0 */
  port?: number;
}

interface Pair {
  client: Socket;
  server: Socket | null;
  /** Bytes the client sent while no server socket existed yet, or while forwarding was stopped. */
  held: { toServer: Buffer[]; toClient: Buffer[] };
}

/**
 * Starts a proxy on 127.0.0.1 forwarding to `targetHost:targetPort`.
 * @throws when the port cannot be bound.
 */
export async function startTcpProxy(options: TcpProxyOptions): Promise<TcpProxy> {
  const targetHost = options.targetHost ?? "127.0.0.1";
  const pairs = new Set<Pair>();
  let stalled = false;

  const flush = (pair: Pair) => {
    if (stalled || !pair.server) return;
    for (const chunk of pair.held.toServer.splice(0)) pair.server.write(chunk);
    for (const chunk of pair.held.toClient.splice(0)) pair.client.write(chunk);
  };
  const connectServer = (pair: Pair) => {
    const server = createConnection({ host: targetHost, port: options.targetPort });
    pair.server = server;
    server.on("data", (chunk: Buffer) => {
      if (stalled) pair.held.toClient.push(chunk);
      else pair.client.write(chunk);
    });
    server.on("error", () => pair.client.destroy());
    server.on("close", () => pair.client.destroy());
    server.on("connect", () => flush(pair));
  };

  const listener: Server = createServer((client) => {
    const pair: Pair = { client, server: null, held: { toServer: [], toClient: [] } };
    pairs.add(pair);
    client.on("data", (chunk: Buffer) => {
      if (stalled || !pair.server || pair.server.connecting) pair.held.toServer.push(chunk);
      else pair.server.write(chunk);
    });
    client.on("error", () => pair.server?.destroy());
    client.on("close", () => {
      pair.server?.destroy();
      pairs.delete(pair);
    });
    if (!stalled) connectServer(pair);
  });
  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject);
    listener.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const address = listener.address();
  if (address === null || typeof address === "string") throw new Error("tcp proxy: no port");

  const proxy: TcpProxy = {
    port: address.port,
    connections: () => pairs.size,
    stalled: () => stalled,
    stall() {
      stalled = true;
    },
    resume() {
      if (!stalled) return;
      stalled = false;
      for (const pair of pairs) {
        if (pair.server) flush(pair);
        else connectServer(pair);
      }
    },
    async stallFor(ms) {
      proxy.stall();
      await new Promise((resolve) => setTimeout(resolve, ms));
      proxy.resume();
    },
    resetAll() {
      for (const pair of pairs) {
        pair.client.resetAndDestroy();
        pair.server?.destroy();
      }
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.server?.destroy();
      }
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
  return proxy;
}
