/**
 * `npm start` with the example remotes' ports taken (issue 22: a bare `listen EADDRINUSE` naming no
 * setting): a default port in use moves the remote to a free port and the banner says so; a URL the
 * user set that is in use stops the start naming the setting.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExampleRemotes } from "./example-remotes.ts";
import type { FakeRemote } from "./remotes/index.ts";

let held: Server;
let heldUrl: string;
const started: FakeRemote[] = [];
const noFaults = { rates: {}, seed: null };

beforeAll(async () => {
  held = createServer();
  held.listen(0, "127.0.0.1");
  await once(held, "listening");
  heldUrl = `http://127.0.0.1:${(held.address() as { port: number }).port}`;
});
afterAll(async () => {
  await Promise.all(started.map((r) => r.close()));
  await new Promise((resolve) => held.close(resolve));
});

describe("startExampleRemotes", () => {
  it("a default URL whose port is taken: the remote listens on a free port, the URL and the banner say so", async () => {
    const urls = { TRISTATE_PAYMENTS_URL: heldUrl, TRISTATE_MAIL_URL: heldUrl };
    const { remotes, lines } = await startExampleRemotes({}, urls, noFaults);
    started.push(...remotes);
    expect(remotes).toHaveLength(2);
    expect(urls.TRISTATE_PAYMENTS_URL).not.toBe(heldUrl);
    expect(urls.TRISTATE_PAYMENTS_URL).toBe(remotes[0]?.url);
    expect(urls.TRISTATE_MAIL_URL).toBe(remotes[1]?.url);
    const port = new URL(heldUrl).port;
    expect(lines[0]).toBe(
      `example payments service at ${remotes[0]?.url} (port ${port} is in use, another Tristate?; TRISTATE_PAYMENTS_URL sets it)`,
    );
    // The moved remote answers.
    expect((await fetch(`${urls.TRISTATE_PAYMENTS_URL}/effects?clientRef=x`)).status).toBe(200);
  });

  it("a URL the user set whose port is taken: an error naming the setting", async () => {
    const urls = { TRISTATE_PAYMENTS_URL: heldUrl, TRISTATE_MAIL_URL: "http://mail.example.com" };
    const error = await startExampleRemotes({ TRISTATE_PAYMENTS_URL: heldUrl }, urls, noFaults).catch((e: Error) => e);
    expect((error as Error).message).toBe(
      `127.0.0.1:${new URL(heldUrl).port} is in use (another Tristate?): set TRISTATE_PAYMENTS_URL=http://127.0.0.1:<a free port> or stop the other process`,
    );
  });
});
