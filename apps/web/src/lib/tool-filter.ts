/**
 * The tool filter of the list pages (`?tool=`): a case-insensitive substring of the tool name, as
 * the executor matches it (`refund` finds `issue_refund` and `reverse_refund`). Every list page with a
 * tool filter reads the parameter through here, so they agree on what is sent.
 */

/** Longest tool filter the executor takes (its list filters: 1–200 characters). */
export const TOOL_FILTER_MAX_LENGTH = 200;

/** The filter to send for a `?tool=` value: trimmed; undefined when empty or too long (the page says so). */
export function toolFilter(value: string | undefined): string | undefined {
  const text = value?.trim();
  return text && text.length <= TOOL_FILTER_MAX_LENGTH ? text : undefined;
}

/** The label of a tool filter's input, the same on every list page. */
export const TOOL_FILTER_LABEL = "Tool (name contains)";
