import { Time } from "~/components/time-zone-toggle";
import type { IntentSummary, RouterOutputs } from "~/trpc/types";

/** A run's abort as `runs.get` reads it (rule 13). */
type RunAbortView = NonNullable<RouterOutputs["runs"]["get"]["abort"]>;

const VIA_WORDS: Record<RunAbortView["via"], string> = {
  agent: "an agent",
  operator: "an operator",
  embedded: "the executor's host",
};

/** One group of steps by where they stand, by their step ids (or "none"). */
function Group({
  testId,
  title,
  keys,
  byKey,
}: {
  testId: string;
  title: string;
  keys: string[];
  byKey: ReadonlyMap<string, IntentSummary>;
}) {
  return (
    <div data-testid={testId} data-count={keys.length}>
      <h3>
        {title} ({keys.length})
      </h3>
      {keys.length ? (
        <ul>
          {keys.map((key) => {
            const record = byKey.get(key);
            return (
              <li key={key}>
                <span className="mono nowrap">{record?.stepId ?? key}</span>
                {record ? ` · ${record.tool}` : ""}
              </li>
            );
          })}
        </ul>
      ) : (
        <p className="muted small">None.</p>
      )}
    </div>
  );
}

/**
 * The run's abort (DESIGN.md rule 13): who aborted it, when and why, and its steps in three groups —
 * undone; waiting for steps still in flight (undone when they settle, nobody needs to abort again);
 * waiting for a person. "Complete" only when the last two are empty.
 */
export function RunAbortState({ abort, records }: { abort: RunAbortView; records: IntentSummary[] }) {
  const byKey = new Map(records.map((r) => [r.key, r] as const));
  return (
    <section className="panel" aria-label="Run aborted" data-testid="run-aborted" data-complete={abort.complete}>
      <h2>Run aborted</h2>
      <p>
        Aborted <Time epochMs={abort.abortedAtEpochMs} /> by{" "}
        <strong data-testid="run-aborted-by">{abort.actorName}</strong> ({VIA_WORDS[abort.via]})
        {abort.reason ? (
          <>
            : <q data-testid="run-aborted-reason">{abort.reason}</q>
          </>
        ) : (
          "; no reason given"
        )}
        . No new step of this run is sent.
      </p>
      <p data-testid="run-aborted-state">
        <strong>{abort.complete ? "Complete:" : "Not complete:"}</strong>{" "}
        {abort.complete
          ? "every effect that can be undone was undone; nothing is in flight and nothing waits for a person."
          : "some steps are still in flight (they will be undone when they settle) or wait for a person."}
      </p>
      <Group testId="abort-undone" title="Undone" keys={abort.undone} byKey={byKey} />
      <Group
        testId="abort-in-flight"
        title="Waiting for steps in flight (they will be undone when they settle)"
        keys={abort.inFlight}
        byKey={byKey}
      />
      <Group testId="abort-waiting-person" title="Waiting for a person" keys={abort.waitingForPerson} byKey={byKey} />
    </section>
  );
}
