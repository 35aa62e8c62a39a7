import { type ChildProcess, spawn } from "node:child_process";
import { createConnection, createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const appDir = join(dirname(fileURLToPath(import.meta.url)), "..");

/** A service process started by a test. */
export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** SIGKILL, and wait for the exit. */
  kill(): Promise<void>;
  /** SIGTERM, and wait for the exit (graceful stop). */
  stop(): Promise<number | null>;
}

/** Starts `src/main.ts` in its own Node process; resolves once it prints its URL. */
export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: appDir,
    env: { ...process.env, NODE_OPTIONS: "", PORT: "0", LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start in 30 s:\n${out}`)), 30_000);
    const onData = () => {
      const m = /Tristate executor at (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout?.on("data", onData);
    child.once("exit", () => {
      clearTimeout(timer);
      reject(new Error(`service exited before starting:\n${out}`));
    });
  });
  return {
    url,
    child,
    output: () => out,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

/** A loopback port free now (another process may take it before it is used). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** True when something accepts connections on 127.0.0.1:`port`. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
