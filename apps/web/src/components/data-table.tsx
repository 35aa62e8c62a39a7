"use client";

import {
  type ColumnDef,
  flexRender,
  getCoreRowModel,
  getSortedRowModel,
  type Row,
  type SortingState,
  useReactTable,
} from "@tanstack/react-table";
import { type HTMLAttributes, useState } from "react";

declare module "@tanstack/react-table" {
  interface ColumnMeta<TData, TValue> {
    /** `data-testid` of the column's cells. */
    testId?: string;
    /** Right-aligned numbers. */
    numeric?: boolean;
  }
}

/** Columns of a {@link DataTable} (value types differ per column). */
// biome-ignore lint/suspicious/noExplicitAny: TanStack's own idiom for mixed column value types
export type Columns<T> = ColumnDef<T, any>[];

/**
 * A TanStack table with sortable headers (`aria-sort`), named for assistive technology and tests;
 * column groups get a header row of their own (`scope="colgroup"`).
 */
export function DataTable<T>({
  label,
  data,
  columns,
  rowProps,
  initialSorting = [],
  sorting: controlled,
  onSortingChange,
}: {
  label: string;
  data: T[];
  columns: Columns<T>;
  rowProps?: (row: Row<T>) => HTMLAttributes<HTMLTableRowElement> & Record<`data-${string}`, string>;
  initialSorting?: SortingState;
  /** The sort, when the caller keeps it (e.g. in the URL); with {@link onSortingChange}. */
  sorting?: SortingState;
  onSortingChange?: (sorting: SortingState) => void;
}) {
  const [own, setOwn] = useState<SortingState>(initialSorting);
  const sorting = controlled ?? own;
  const setSorting = (updater: SortingState | ((old: SortingState) => SortingState)) => {
    const next = typeof updater === "function" ? updater(sorting) : updater;
    if (onSortingChange) onSortingChange(next);
    else setOwn(next);
  };
  const table = useReactTable({
    data,
    columns,
    state: { sorting },
    onSortingChange: setSorting,
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
  });
  return (
    <div className="table-wrap">
      <table aria-label={label}>
        <thead>
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id}>
              {group.headers.map((header) => {
                // A column group's header spans its columns; above an ungrouped column the cell is empty.
                if (header.isPlaceholder) return <td key={header.id} className="placeholder" />;
                if (header.subHeaders.length) {
                  return (
                    <th key={header.id} scope="colgroup" colSpan={header.colSpan} className="group">
                      {flexRender(header.column.columnDef.header, header.getContext())}
                    </th>
                  );
                }
                const sorted = header.column.getIsSorted();
                const content = flexRender(header.column.columnDef.header, header.getContext());
                return (
                  <th
                    key={header.id}
                    scope="col"
                    className={header.column.columnDef.meta?.numeric ? "num" : undefined}
                    aria-sort={sorted === "asc" ? "ascending" : sorted === "desc" ? "descending" : undefined}
                  >
                    {header.column.getCanSort() ? (
                      <button type="button" className="sort" onClick={header.column.getToggleSortingHandler()}>
                        {content}
                        <span aria-hidden="true">{sorted === "asc" ? " ▲" : sorted === "desc" ? " ▼" : ""}</span>
                      </button>
                    ) : (
                      content
                    )}
                  </th>
                );
              })}
            </tr>
          ))}
        </thead>
        <tbody>
          {table.getRowModel().rows.map((row) => (
            <tr key={row.id} {...rowProps?.(row)}>
              {row.getVisibleCells().map((cell) => (
                <td
                  key={cell.id}
                  data-testid={cell.column.columnDef.meta?.testId}
                  className={cell.column.columnDef.meta?.numeric ? "num" : undefined}
                >
                  {flexRender(cell.column.columnDef.cell, cell.getContext())}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
