// Every list of the dashboard: sortable columns, a filter box, and rows virtualised so that a list of
// thousands renders as fast as one of ten. Rows link to their page.
import type { ColumnDef, SortingState } from '@tanstack/react-table';
import { flexRender, getCoreRowModel, getFilteredRowModel, getSortedRowModel, useReactTable } from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useMemo, useRef, useState } from 'react';
import type { ReactNode } from 'react';
import { useNav } from '../app/nav';

export interface Column<T> {
  id: string;
  header: string;
  cell: (row: T) => ReactNode;
  /** what sorting and the filter read; without it the column does not sort */
  value?: (row: T) => string | number | undefined;
  width?: number | string;
  align?: 'right';
}

export interface DataTableProps<T> {
  rows: T[];
  columns: Column<T>[];
  rowKey: (row: T) => string;
  rowHref?: (row: T) => string | undefined;
  empty?: ReactNode;
  loading?: boolean;
  /** shown above the table, beside the filter */
  toolbar?: ReactNode;
  /** a checkbox per row; the selection is the caller's */
  selected?: Set<string>;
  onSelect?: (key: string, on: boolean) => void;
  height?: number | string;
  label?: string;
  initialSort?: SortingState;
}

const ROW = 34;

export function DataTable<T>(props: DataTableProps<T>) {
  const { rows, columns, rowKey, rowHref, selected, onSelect } = props;
  const { navigate } = useNav();
  const [sorting, setSorting] = useState<SortingState>(props.initialSort ?? []);
  const [filter, setFilter] = useState('');
  const defs = useMemo<ColumnDef<T>[]>(
    () =>
      columns.map((c) => ({
        id: c.id,
        header: c.header,
        accessorFn: (r: T) => c.value?.(r) ?? '',
        enableSorting: c.value !== undefined,
        cell: (ctx) => {
          const v = c.cell(ctx.row.original);
          // plain text in a span of its own, which can end in an ellipsis when the column is narrow
          return typeof v === 'string' || typeof v === 'number' ? <span className="cell-text">{v}</span> : v;
        },
      })),
    [columns],
  );
  const table = useReactTable({
    data: rows,
    columns: defs,
    state: { sorting, globalFilter: filter },
    onSortingChange: setSorting,
    onGlobalFilterChange: setFilter,
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
    getFilteredRowModel: getFilteredRowModel(),
    globalFilterFn: (row, _id, value: string) => {
      const needle = value.toLowerCase();
      return columns.some((c) => String(c.value?.(row.original) ?? '').toLowerCase().includes(needle));
    },
    getRowId: (r) => rowKey(r),
  });
  const model = table.getRowModel().rows;
  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({ count: model.length, getScrollElement: () => scroller.current, estimateSize: () => ROW, overscan: 12 });
  const template = [...(onSelect ? ['32px'] : []), ...columns.map((c) => (typeof c.width === 'number' ? `${c.width}px` : c.width ?? 'minmax(80px, 1fr)'))].join(' ');
  const items = virtual.getVirtualItems();
  return (
    <div className="datatable">
      <div className="toolbar">
        <input className="filter" type="search" placeholder="Filter" aria-label={`Filter ${props.label ?? 'rows'}`} value={filter} onChange={(e) => setFilter(e.target.value)} />
        <span className="muted count">{filter ? `${model.length} of ${rows.length}` : `${rows.length}`} {rows.length === 1 ? 'item' : 'items'}</span>
        {props.toolbar}
      </div>
      <div className="dt-head" style={{ gridTemplateColumns: template }} role="row">
        {onSelect && <span />}
        {table.getHeaderGroups()[0]?.headers.map((h, i) => {
          const sort = h.column.getIsSorted();
          const col = columns[i];
          return (
            <button
              key={h.id}
              type="button"
              role="columnheader"
              className={`th ${col?.align === 'right' ? 'right' : ''}`}
              disabled={!h.column.getCanSort()}
              aria-sort={sort === 'asc' ? 'ascending' : sort === 'desc' ? 'descending' : 'none'}
              onClick={h.column.getToggleSortingHandler()}
            >
              {flexRender(h.column.columnDef.header, h.getContext())}
              {sort === 'asc' ? ' ▲' : sort === 'desc' ? ' ▼' : ''}
            </button>
          );
        })}
      </div>
      <div className="dt-body" ref={scroller} style={{ height: props.height ?? 'auto', maxHeight: props.height ? undefined : 'calc(100vh - 220px)' }} role="rowgroup" aria-label={props.label}>
        {model.length === 0 ? (
          <div className="empty">{props.loading ? 'Loading…' : filter ? 'Nothing matches the filter.' : props.empty ?? 'Nothing here yet.'}</div>
        ) : (
          <div style={{ height: virtual.getTotalSize(), position: 'relative' }}>
            {items.map((vi) => {
              const row = model[vi.index];
              if (!row) return null;
              const link = rowHref?.(row.original);
              const key = row.id;
              return (
                <div
                  key={key}
                  className={`dt-row ${link ? 'link' : ''}`}
                  role="row"
                  style={{ gridTemplateColumns: template, transform: `translateY(${vi.start}px)`, height: ROW }}
                  onClick={(e) => {
                    if (!link || (e.target as HTMLElement).closest('a,button,input')) return;
                    navigate(link);
                  }}
                >
                  {onSelect && (
                    <span className="td">
                      <input type="checkbox" aria-label={`select ${key}`} checked={selected?.has(key) ?? false} onChange={(e) => onSelect(key, e.target.checked)} />
                    </span>
                  )}
                  {row.getVisibleCells().map((cell, i) => {
                    // what a cut cell says in full, on hover
                    const full = columns[i]?.value?.(row.original);
                    return (
                      <span key={cell.id} className={`td ${columns[i]?.align === 'right' ? 'right' : ''}`} role="cell" title={typeof full === 'string' && full ? full : undefined}>
                        {flexRender(cell.column.columnDef.cell, cell.getContext())}
                      </span>
                    );
                  })}
                </div>
              );
            })}
          </div>
        )}
      </div>
    </div>
  );
}
