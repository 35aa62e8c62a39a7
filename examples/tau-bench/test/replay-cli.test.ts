/** `pnpm tau:replay` flags: the fault timing, named mixes and ports; each bad value named with its rule. */
import { describe, expect, it } from "vitest";
import { parseReplayArgs, REPLAY_USAGE, type ReplayArgs } from "../src/replay/cli.ts";
import { DEFAULT_FAULTS } from "../src/service/faults.ts";
import "./support.ts";

describe("tau:replay flags", () => {
  const parse = (...argv: string[]) => parseReplayArgs(argv) as ReplayArgs;

  it("defaults: the service's fault timing, any free ports, the derived settle window", () => {
    const a = parse();
    expect(a.faults).toMatchObject({
      rate: 0.2,
      mix: DEFAULT_FAULTS.mix,
      lagMs: DEFAULT_FAULTS.lagMs,
      hangMs: DEFAULT_FAULTS.hangMs,
      lagResponse: "504",
    });
    expect(a).toMatchObject({ servicePort: 0, executorPort: 0, unboundedLag: false, abortShare: 0 });
    expect(parse("--abort-share", "0.2").abortShare).toBe(0.2);
  });

  it("reads --lag-ms, --hang-ms, --lag-response, --fault-mix lag-heavy, ports and --unbounded-lag", () => {
    const a = parse(
      "--fault-rate",
      "0.3",
      "--fault-mix",
      "lag-heavy",
      "--lag-ms",
      "5000",
      "--hang-ms",
      "8000",
      "--lag-response",
      "hang",
      "--service-port",
      "4300",
      "--executor-port",
      "4310",
      "--unbounded-lag",
    );
    expect(a.faults).toEqual({
      rate: 0.3,
      mix: { lag: 4, hang: 2, "504": 1, reset: 1, "503": 1, refuse: 1 },
      seed: 1,
      lagMs: 5000,
      hangMs: 8000,
      lagResponse: "hang",
    });
    expect(a).toMatchObject({ servicePort: 4300, executorPort: 4310, unboundedLag: true });
    expect(parse("--fault-mix", "lag=4,hang=2,504=1,reset=1").faults.mix).toEqual({
      lag: 4,
      hang: 2,
      "504": 1,
      reset: 1,
    });
  });

  it.each([
    [["--lag-ms=-1"], '--lag-ms "-1": must be an integer from 0 to 600000 (ms)'],
    [["--lag-ms", "2.5"], '--lag-ms "2.5": must be an integer from 0 to 600000 (ms)'],
    [["--lag-ms", "soon"], '--lag-ms "soon": must be a number'],
    [["--lag-ms", ""], '--lag-ms "": needs a value'],
    [["--hang-ms", "600001"], '--hang-ms "600001": must be an integer from 0 to 600000 (ms)'],
    [["--lag-response", "200"], '--lag-response "200": must be ok, 504 or hang'],
    [["--abort-share", "1.5"], '--abort-share "1.5": must be from 0 to 1'],
    [["--abort-share", "some"], '--abort-share "some": must be a number'],
    [["--fault-mix", "lag-light"], '--fault-mix "lag-light": '],
    [["--service-port", "65534"], '--service-port "65534": must be an integer from 0 to 65533'],
    [["--service-port=-5"], '--service-port "-5": must be an integer from 0 to 65533'],
    [["--executor-port", "70000"], '--executor-port "70000": must be an integer from 0 to 65535 (0 = any free port)'],
    [
      ["--service-port", "4300", "--executor-port", "4302"],
      "--executor-port 4302: must differ from the services' ports 4300–4302",
    ],
  ])("refuses %j naming the flag and its rule", (argv, message) => {
    expect(() => parseReplayArgs(argv)).toThrow(message);
  });

  it("documents every new flag in the usage text", () => {
    for (const flag of [
      "--lag-ms",
      "--hang-ms",
      "--lag-response",
      "--unbounded-lag",
      "--service-port",
      "--executor-port",
      "--abort-share",
      "lag-heavy",
    ]) {
      expect(REPLAY_USAGE).toContain(flag);
    }
  });
});
