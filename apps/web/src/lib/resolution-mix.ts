import { intentListHref } from "./intent-filters";

/** The rollups' categories of how an UNKNOWN ended (`stats.overview`'s `resolutions`), in table order. */
export const MIX_KEYS = [
  "found",
  "absent_resent",
  "human_confirmed_effect",
  "human_confirmed_no_effect",
  "human_resent",
  "open",
  "other",
] as const;

/** One category of {@link MIX_KEYS}. */
export type MixKey = (typeof MIX_KEYS)[number];

/** The counts a row of the overview has: its ever-UNKNOWN calls and how they ended. */
export interface MixSource {
  tool: string;
  unknownCount: number;
  resolutions: Record<MixKey, number>;
}

/** One segment of the resolution mix: its count, colour (a CSS value) and the records it links to. */
export interface MixSegment {
  key: MixKey;
  /** Short name, for the bar's tooltip and the legend. */
  label: string;
  /** Column header. */
  header: string;
  /** What the category means (the header's and the legend's title). */
  meaning: string;
  count: number;
  color: string;
  /** The records of the category, or null when no list filter selects exactly them (`other`). */
  href: string | null;
}

const CATEGORY: Record<MixKey, { label: string; header: string; meaning: string }> = {
  found: { label: "found", header: "Found", meaning: "a probe found the effect: it happened once" },
  absent_resent: {
    label: "absent → resent",
    header: "Absent → resent",
    meaning: "a probe found no effect and the executor resent it with the same key",
  },
  human_confirmed_effect: {
    label: "person: happened",
    header: "Person: happened",
    meaning: "a person confirmed the effect happened",
  },
  human_confirmed_no_effect: {
    label: "person: did not happen",
    header: "Person: did not",
    meaning: "a person confirmed it did not happen",
  },
  human_resent: { label: "person: resent", header: "Person: resent", meaning: "a person resent it with the same key" },
  open: {
    label: "still open",
    header: "Still open",
    meaning: "not settled yet: UNKNOWN, a resend in flight, or waiting for a person",
  },
  other: {
    label: "other",
    header: "Other",
    meaning: "settled without a resolution, e.g. a resend the remote refused",
  },
};

/** A category's names, meaning and colour (a CSS value, `--seg-<key>`), for headers and legends. */
export function mixCategory(key: MixKey): { label: string; header: string; meaning: string; color: string } {
  return { ...CATEGORY[key], color: `var(--seg-${key})` };
}

/**
 * The resolution mix of a row: one segment per category of {@link MIX_KEYS} (every one, zeros
 * included, so the columns and the legend never shift), each with its colour (`--seg-<key>`) and the
 * `/intents` link of its records in `window` (epoch ms) — `open` as the tool's UNKNOWN records, `other`
 * without a link.
 */
export function mixSegments(row: MixSource, window: { fromEpochMs: number; toEpochMs: number }): MixSegment[] {
  const base = { tool: row.tool, ...window };
  return MIX_KEYS.map((key) => ({
    key,
    ...mixCategory(key),
    count: row.resolutions[key],
    href:
      key === "other"
        ? null
        : key === "open"
          ? intentListHref({ ...base, status: "UNKNOWN" })
          : intentListHref({ ...base, resolution: key }),
  }));
}

/**
 * The mix in words, for the bar's accessible name and a row without a bar: every category with a
 * count, or "no UNKNOWN" only when the row had none. A row whose categories do not add up to its
 * UNKNOWN count says so rather than contradict its share.
 */
export function mixSummary(segments: MixSegment[], unknownCount: number): string {
  if (unknownCount === 0) return "no UNKNOWN";
  const shown = segments.filter((s) => s.count > 0);
  const counted = shown.reduce((n, s) => n + s.count, 0);
  const parts = shown.map((s) => `${s.label} ${s.count}`);
  if (counted < unknownCount) parts.push(`not broken down ${unknownCount - counted}`);
  return `${unknownCount} UNKNOWN: ${parts.join(", ")}`;
}
