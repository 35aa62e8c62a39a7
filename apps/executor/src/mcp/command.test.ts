/**
 * `tristate mcp`'s flags and settings (issue 22 §5), in process: the service's URL, the key's
 * sources, and the mistakes refused with exit code 2 before anything is started.
 */
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../cli.ts";
import { mcpEndpoint } from "./command.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "tristate-mcp-command-"));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Runs the CLI with `argv` and `env`: its exit code and what it wrote to stderr. */
async function run(argv: string[], env: Record<string, string> = {}) {
  let err = "";
  const write = (text: string) => {
    err += text;
  };
  const code = await main(argv, { out: () => {}, err: write, env });
  return { code, err };
}

describe("mcpEndpoint", () => {
  it("defaults to the local service as `npm start` prints it: HOST and PORT, a wildcard host read as loopback", () => {
    expect(mcpEndpoint(undefined, { HOST: "127.0.0.1", PORT: 4100 }).href).toBe("http://127.0.0.1:4100/mcp");
    expect(mcpEndpoint(undefined, { HOST: "0.0.0.0", PORT: 5000 }).href).toBe("http://127.0.0.1:5000/mcp");
    expect(mcpEndpoint(undefined, { HOST: "::", PORT: 4100 }).href).toBe("http://[::1]:4100/mcp");
    expect(mcpEndpoint(undefined, { HOST: "tristate.internal", PORT: 80 }).href).toBe("http://tristate.internal/mcp");
  });

  it("a URL gets /mcp appended unless its path ends so", () => {
    const env = { HOST: "127.0.0.1", PORT: 4100 };
    expect(mcpEndpoint("http://10.0.0.5:4100", env).href).toBe("http://10.0.0.5:4100/mcp");
    expect(mcpEndpoint("https://x.example/tristate/", env).href).toBe("https://x.example/tristate/mcp");
    expect(mcpEndpoint("https://x.example/tristate/mcp", env).href).toBe("https://x.example/tristate/mcp");
  });

  it("refuses what is not an http(s) URL, naming the flag", () => {
    const env = { HOST: "127.0.0.1", PORT: 4100 };
    expect(() => mcpEndpoint("localhost:4100", env)).toThrow(/--url \(or TRISTATE_URL\) must be http: or https:/);
    expect(() => mcpEndpoint("not a url", env)).toThrow(/--url \(or TRISTATE_URL\) must be an http\(s\) URL/);
  });
});

describe("tristate mcp: flags refused before anything starts (exit 2)", () => {
  it("--key: the key would be visible in ps", async () => {
    const { code, err } = await run(["mcp", "--key", "ts_agent_x"]);
    expect(code).toBe(2);
    expect(err).toMatch(
      /--key would show the key to every user of this machine \(ps\); set TRISTATE_API_KEY or pass --key-file/,
    );
  });

  it("--url with --direct, an unknown flag, an argument", async () => {
    expect((await run(["mcp", "--direct", "--url", "http://127.0.0.1:1"])).err).toMatch(
      /--url and --direct exclude each other/,
    );
    expect((await run(["mcp", "--database"])).err).toMatch(
      /unknown flag --database \(allowed: --url, --key-file, --direct\)/,
    );
    expect((await run(["mcp", "serve"])).code).toBe(2);
  });

  it("no key: names both sources; an empty or missing key file: names the file", async () => {
    expect(await run(["mcp"])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/set TRISTATE_API_KEY .* or pass --key-file FILE/),
    });
    const empty = join(dir, "empty.key");
    await writeFile(empty, "\n");
    expect(await run(["mcp", "--key-file", empty])).toMatchObject({
      code: 2,
      err: expect.stringMatching(/the file is empty/),
    });
    const missing = join(dir, "missing.key");
    expect(await run(["mcp", "--key-file", missing])).toMatchObject({ code: 2, err: expect.stringContaining(missing) });
  });

  it("a bad TRISTATE_URL or --url: exit 2 naming it (the key read from a file first; a readable file warned about)", async () => {
    const file = join(dir, "agent.key");
    await writeFile(file, "ts_agent_from_file\n");
    await chmod(file, 0o644);
    const bad = await run(["mcp", "--key-file", file, "--url", "ftp://127.0.0.1/"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/readable by other users \(chmod 600 it\)/);
    expect(bad.err).toMatch(/must be http: or https:, got ftp:/);
    const badSetting = await run(["mcp"], { TRISTATE_API_KEY: "ts_agent_x", TRISTATE_URL: "nope" });
    expect(badSetting).toMatchObject({ code: 2, err: expect.stringMatching(/TRISTATE_URL/) });
  });
});
