import Link from "next/link";
import type { ParamProblem } from "~/lib/url-params";

/**
 * Says which URL parameters the page ignores and why (parameter, value, rule), with a link to the
 * same page without them; the rest of the page works on the parameters that are valid.
 */
export function ParamProblems({
  problems,
  path,
  kept,
}: {
  problems: ParamProblem[];
  path: string;
  kept: Record<string, string>;
}) {
  if (!problems.length) return null;
  const search = new URLSearchParams(kept).toString();
  return (
    <div role="alert" className="error" data-testid="param-problems">
      <strong>Some of the address's parameters are ignored.</strong>
      <ul>
        {problems.map((p) => (
          <li key={p.param} data-param={p.param}>
            <code>
              ?{p.param}={p.value}
            </code>
            : {p.param} {p.rule}.
          </li>
        ))}
      </ul>
      <Link href={`${path}${search ? `?${search}` : ""}`}>Remove them from the address</Link>
    </div>
  );
}
