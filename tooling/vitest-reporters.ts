/**
 * Reporters shared by every package's vitest config: the default console reporter, plus a JSON
 * report in `TRISTATE_TEST_RESULTS_DIR` (set by `npm test`) so one closing line can sum all packages.
 */
export function reporters(packageName: string): { reporters: string[]; outputFile?: Record<string, string> } {
  const dir = process.env.TRISTATE_TEST_RESULTS_DIR;
  if (!dir) return { reporters: ["default"] };
  return { reporters: ["default", "json"], outputFile: { json: `${dir}/${packageName}.json` } };
}
