/**
 * `npm start`'s example remotes (the payment and mail services the example catalog talks to), on
 * loopback in the service's process. A default port already taken (another Tristate holds 4201) moves
 * that remote to a free port, said in the banner; a URL the user set that is taken stops the start
 * with an error naming the setting to change.
 */
import { type DemoFaultSettings, type FakeRemote, startFakeRemote } from "./remotes/index.ts";

const SETTINGS = [
  ["payments", "TRISTATE_PAYMENTS_URL"],
  ["mail", "TRISTATE_MAIL_URL"],
] as const;

/** The URLs the example catalog reads; a remote moved to a free port updates its entry. */
export interface ExampleRemoteUrls {
  TRISTATE_PAYMENTS_URL: string;
  TRISTATE_MAIL_URL: string;
}

/**
 * Starts the example remotes whose URL is on this machine (a remote elsewhere is the user's).
 * @param source the environment as the user set it (which URLs were set, not defaulted).
 * @param urls the URLs in force (defaults filled); updated in place when a remote moves to a free port.
 * @returns the remotes started and one banner line per remote (`example payments service at …`).
 * @throws Error naming the setting (`set TRISTATE_PAYMENTS_URL=…`) when a URL the user set is in use.
 */
export async function startExampleRemotes(
  source: Record<string, string | undefined>,
  urls: ExampleRemoteUrls,
  randomFaults: DemoFaultSettings,
): Promise<{ remotes: FakeRemote[]; lines: string[] }> {
  const remotes: FakeRemote[] = [];
  const lines: string[] = [];
  for (const [name, setting] of SETTINGS) {
    const url = urls[setting];
    const { hostname, port } = new URL(url);
    if (hostname !== "127.0.0.1" && hostname !== "localhost") continue; // a real service: not ours to start
    const start = (at: number) => startFakeRemote({ port: at, honorsKey: name === "payments", randomFaults });
    try {
      remotes.push(await start(Number(port)));
      lines.push(`example ${name} service at ${url}`);
    } catch (error) {
      if ((error as { code?: string }).code !== "EADDRINUSE") throw error;
      if (source[setting]) {
        throw new Error(
          `127.0.0.1:${port} is in use (another Tristate?): set ${setting}=http://127.0.0.1:<a free port> or stop the other process`,
          { cause: error },
        );
      }
      const remote = await start(0);
      remotes.push(remote);
      urls[setting] = remote.url;
      lines.push(
        `example ${name} service at ${remote.url} (port ${port} is in use, another Tristate?; ${setting} sets it)`,
      );
    }
  }
  return { remotes, lines };
}
