import { Time } from "~/components/time-zone-toggle";
import { isPreset, type RANGE_PRESETS } from "~/lib/time-range";

const LABELS: Record<keyof typeof RANGE_PRESETS, string> = {
  "15m": "Last 15 minutes",
  "1h": "Last hour",
  "6h": "Last 6 hours",
  "24h": "Last 24 hours",
  "7d": "Last 7 days",
};

/** Props of {@link RangeFields}. */
interface RangeFieldsProps {
  params: Record<string, string>;
  window: { fromEpochMs?: number; toEpochMs?: number };
  anyTime?: boolean;
  defaultPreset?: keyof typeof RANGE_PRESETS;
  what?: string;
}

/**
 * The time range's fields, for a list's own filter form: the select (any time, a preset `range`, or
 * the absolute window already in the URL, kept as hidden `from`/`to`). `anyTime: false` (a list that
 * needs a window, e.g. runs) offers no "Any time" and shows `defaultPreset` when the URL names no range.
 */
export function RangeFields({ params, window, anyTime = true, defaultPreset }: RangeFieldsProps) {
  const absolute = !isPreset(params.range) && window.fromEpochMs !== undefined && params.from !== undefined;
  return (
    <>
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
    </>
  );
}

/** The window a list shows, in words: "`what` from … to …." (nothing without a start). */
export function WindowText({
  window,
  what = "Created",
}: {
  window: { fromEpochMs?: number; toEpochMs?: number };
  what?: string;
}) {
  if (window.fromEpochMs === undefined) return null;
  return (
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
  );
}
