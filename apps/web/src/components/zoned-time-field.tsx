import { type DisplayTimeZone, displayZoneName, toDateTimeInput } from "~/lib/format";

/**
 * A labelled `datetime-local` field in the page's display zone: its label names the zone, and it is
 * re-mounted when the zone changes so its value follows. Read it back with `fromDateTimeInput`.
 * @param epochMs - the initial instant (epoch ms), or undefined for an empty field.
 */
export function ZonedTimeField(props: {
  label: string;
  name: string;
  epochMs: number | undefined;
  zone: DisplayTimeZone;
  required?: boolean;
}) {
  return (
    <label className="field">
      <span>
        {props.label} ({displayZoneName(props.zone)})
      </span>
      <input
        key={props.zone}
        type="datetime-local"
        name={props.name}
        defaultValue={toDateTimeInput(props.epochMs, props.zone)}
        required={props.required}
      />
    </label>
  );
}
