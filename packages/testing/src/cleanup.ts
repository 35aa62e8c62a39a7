import type { Server, Socket } from "node:net";

/**
 * Cleanups of one test file, run in reverse order after each test (`afterEach(() => cleanup.run())`):
 * servers with their open sockets, clients, databases. Every task runs even when one fails; the
 * failures are thrown together. Test helper: not for production use.
 */
export class Cleanup {
  #tasks: (() => Promise<unknown> | unknown)[] = [];

  /** Registers `fn` and returns `value` (for `const x = cleanup.add(await make(), (x) => x.close())`). */
  add<T>(value: T, fn: (value: T) => Promise<unknown> | unknown): T {
    this.#tasks.push(() => fn(value));
    return value;
  }

  /** Registers a listening server: its open sockets are destroyed and it is closed. @returns the server. */
  server<T extends Server>(server: T): T {
    const sockets = new Set<Socket>();
    server.on("connection", (socket: Socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    return this.add(server, async (s) => {
      for (const socket of sockets) socket.destroy();
      if (s.listening) await new Promise<void>((resolve) => s.close(() => resolve()));
    });
  }

  /** Runs every registered task, newest first. @throws AggregateError of the tasks that failed. */
  async run(): Promise<void> {
    const errors: unknown[] = [];
    for (const task of this.#tasks.splice(0).reverse()) {
      try {
        await task();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length) throw new AggregateError(errors, "cleanup failed");
  }
}
