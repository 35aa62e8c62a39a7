import { Time } from "~/components/time-zone-toggle";
import { isPreset, type RANGE_PRESETS } from "~/lib/time-range";

const LABELS: Record<keyof typeof RANGE_PRESETS, string> = {
  "1h": "Last hour",
  "6h": "Last 6 hours",
  "24h": "Last 24 hours",
  "7d": "Last 7 days",
};

/**
 * The time range of a list page as a plain GET form (works before hydration): any time, a preset
 * (`?range=`), or the absolute window already in the URL (`?from=&to=`, e.g. from an overview link).
 * Other parameters are kept, except the page cursor (a new window starts at its newest records).
 * `anyTime: false` (a list that needs a window, e.g. runs) offers no "Any time" and shows
 * `defaultPreset` when the URL names no range; `what` starts the window's description.
 */
export function ListRangePicker({
  path,
  params,
  window,
  anyTime = true,
  defaultPreset,
  what = "Created",
}: {
  path: string;
  params: Record<string, string>;
  window: { fromEpochMs?: number; toEpochMs?: number };
  anyTime?: boolean;
  defaultPreset?: keyof typeof RANGE_PRESETS;
  what?: string;
}) {
  const absolute = !isPreset(params.range) && window.fromEpochMs !== undefined && params.from !== undefined;
  const kept = Object.entries(params).filter(([k]) => !["range", "from", "to", "cursor"].includes(k));
  return (
    <form method="get" action={path} className="toolbar">
      {kept.map(([k, v]) => (
        <input key={k} type="hidden" name={k} value={v} />
      ))}
      <label className="field">
        <span>Time range</span>
        <select
          name="range"
          defaultValue={isPreset(params.range) ? params.range : absolute ? "custom" : (defaultPreset ?? "")}
        >
          {anyTime ? <option value="">Any time</option> : null}
          {Object.entries(LABELS).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
          {absolute ? <option value="custom">From the link (below)</option> : null}
        </select>
      </label>
      {absolute ? (
        <>
          <input type="hidden" name="from" value={params.from} />
          {params.to ? <input type="hidden" name="to" value={params.to} /> : null}
        </>
      ) : null}
      <button type="submit">Apply</button>
      {window.fromEpochMs !== undefined ? (
        <span className="small muted" suppressHydrationWarning>
          {what} from <Time epochMs={window.fromEpochMs} />
          {window.toEpochMs !== undefined ? (
            <>
              {" "}
              to <Time epochMs={window.toEpochMs} />
            </>
          ) : null}
          .
        </span>
      ) : null}
    </form>
  );
}
