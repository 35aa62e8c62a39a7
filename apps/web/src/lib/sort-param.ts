/**
 * A table's sort kept in the URL (`?sort=calls`, `?sort=-calls` for descending), like the filters:
 * a link or a reload shows the same order. One column; unknown column ids are dropped.
 */
import type { SortingState } from "@tanstack/react-table";

/** The sort named by `value` (`column` or `-column`), if `column` is one of `columns`. */
export function parseSortParam(value: string | undefined, columns: readonly string[]): SortingState {
  if (!value) return [];
  const desc = value.startsWith("-");
  const id = desc ? value.slice(1) : value;
  return columns.includes(id) ? [{ id, desc }] : [];
}

/** The `sort` parameter of a sort (its first column), or undefined for none. */
export function sortParamOf(sorting: SortingState): string | undefined {
  const first = sorting[0];
  return first ? `${first.desc ? "-" : ""}${first.id}` : undefined;
}

/** `params` as a query string with `sort` set to `sorting` (removed when unsorted). */
export function withSortParam(params: Record<string, string>, sorting: SortingState): string {
  const query = new URLSearchParams(Object.entries(params).filter(([k]) => k !== "sort"));
  const sort = sortParamOf(sorting);
  if (sort) query.set("sort", sort);
  return query.toString();
}
