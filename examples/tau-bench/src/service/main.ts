/**
 * CLI: runs the τ-bench domain service.
 * `tsx src/service/main.ts --port 4100 --domains retail,airline --fault-rate 0.2 --fault-mix refuse=1,503=1 --seed 1`
 */
import { resolve } from "node:path";
import { tauBenchDataDir } from "../settings.ts";
import { parseCliOptions, USAGE } from "./cli-options.ts";
import { createTauService } from "./http-service.ts";

async function main(): Promise<void> {
  let parsed: ReturnType<typeof parseCliOptions>;
  try {
    parsed = parseCliOptions(
      process.argv.slice(2).filter((a) => a !== "--"),
      tauBenchDataDir(),
    );
  } catch (e) {
    console.error(`${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
    process.exit(2);
  }
  if ("help" in parsed) {
    console.log(USAGE);
    return;
  }
  const options = { ...parsed.options, dataDir: resolve(parsed.options.dataDir) };
  const service = createTauService(options);
  const url = await service.listen(parsed.port, parsed.host);
  console.log(JSON.stringify({ listening: url, domains: options.domains, faults: options.faults }));
  const stop = () => {
    service.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
