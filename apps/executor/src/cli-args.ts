/** The `tristate` command line's argument parsing and I/O (cli.ts, cli-keys.ts). */

/** Where the CLI writes; injectable for tests. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
}

/** A mistake in the command line: printed with the usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** Flags by name (`true` for a boolean flag) and the other arguments, in order. */
export interface Parsed {
  flags: Map<string, string | true>;
  positional: string[];
}

/** Parses `--flag value`, `--flag=value` and boolean flags against the command's allowed flags. */
export function parse(command: string, args: string[], valued: string[], booleans: string[] = []): Parsed {
  const flags = new Map<string, string | true>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (!arg.startsWith("-") || arg === "-") {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg : arg.slice(0, eq);
    if (valued.includes(name)) {
      const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
      if (value === undefined || (eq === -1 && value.startsWith("--"))) {
        throw new UsageError(`${command}: ${name} needs a value`);
      }
      if (flags.has(name)) throw new UsageError(`${command}: ${name} is given twice`);
      flags.set(name, value);
    } else if (booleans.includes(name) && eq === -1) {
      flags.set(name, true);
    } else {
      const allowed = [...valued, ...booleans];
      throw new UsageError(
        `${command}: unknown flag ${name}${allowed.length ? ` (allowed: ${allowed.join(", ")})` : " (it takes none)"}`,
      );
    }
  }
  return { flags, positional };
}

/** @throws UsageError when more than `max` arguments are not flags. */
export function noPositional(command: string, p: Parsed, max = 0): void {
  if (p.positional.length > max) throw new UsageError(`${command}: unexpected argument ${p.positional[max]}`);
}
