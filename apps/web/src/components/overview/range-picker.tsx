"use client";

import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { useTenantFilter } from "~/components/tenant-filter";
import { useDisplayZone } from "~/components/time-zone-toggle";
import { ZonedTimeField } from "~/components/zoned-time-field";
import { fromDateTimeInput } from "~/lib/format";
import { isPreset, type RANGE_PRESETS, type TimeRange } from "~/lib/time-range";

const PRESET_LABELS: Record<keyof typeof RANGE_PRESETS, string> = {
  "15m": "Last 15 minutes",
  "1h": "Last hour",
  "6h": "Last 6 hours",
  "24h": "Last 24 hours",
  "7d": "Last 7 days",
};

/** Presets and an absolute from/to; the choice lives in the URL (`?range=` or `?from=&to=`). */
export function RangePicker({ range }: { range: TimeRange }) {
  const router = useRouter();
  const tenant = useTenantFilter();
  const [custom, setCustom] = useState(range.preset === null);
  const [error, setError] = useState<string | null>(null);
  const zone = useDisplayZone();

  function choose(value: string) {
    if (isPreset(value)) {
      setCustom(false);
      router.push(tenant.href(`/overview?range=${value}`));
    } else setCustom(true);
  }

  function apply(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const from = fromDateTimeInput(String(form.get("from")), zone);
    const to = fromDateTimeInput(String(form.get("to")), zone);
    if (!Number.isFinite(from) || !Number.isFinite(to) || from >= to) {
      setError("From must be before To.");
      return;
    }
    setError(null);
    router.push(tenant.href(`/overview?from=${from}&to=${to}`));
  }

  return (
    <form className="toolbar" onSubmit={apply}>
      <label className="field">
        <span>Time range</span>
        <select value={custom ? "custom" : (range.preset ?? "custom")} onChange={(e) => choose(e.target.value)}>
          {Object.entries(PRESET_LABELS).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
          <option value="custom">Custom…</option>
        </select>
      </label>
      {custom ? (
        <>
          <ZonedTimeField label="From" name="from" epochMs={range.fromEpochMs} zone={zone} required />
          <ZonedTimeField label="To" name="to" epochMs={range.toEpochMs} zone={zone} required />
          <button type="submit">Apply</button>
          {error ? (
            <span role="alert" className="flag">
              {error}
            </span>
          ) : null}
        </>
      ) : null}
    </form>
  );
}
