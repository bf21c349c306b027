import { Grid, Table, type TableProps } from 'antd';
import type { ColumnType } from 'antd/es/table';
import { isValidElement, type ReactNode } from 'react';

/** True below antd's `sm` breakpoint (576 px): where lists become cards. */
export function usePhone(): boolean {
  return Grid.useBreakpoint().sm === false;
}

export interface ResponsiveTableProps<T> extends TableProps<T> {
  /** The heading of the one column a phone sees (read by screen readers; the cards carry the facts). */
  cardTitle: string;
  /** A page's own card for a row; by default every column's title and value, as a definition list. */
  card?: (row: T, index: number) => ReactNode;
}

/**
 * The console's lists: an antd Table on wide screens (scrolling sideways inside itself if it must), and below
 * ~600 px one card per row with the row's facts and actions, so nothing is hidden off to the side and the page
 * never scrolls sideways. Every list uses this one piece; the usage logs pass their own compact card.
 */
export function ResponsiveTable<T extends object>({ cardTitle, card, columns = [], scroll, ...rest }: ResponsiveTableProps<T>) {
  const phone = usePhone();
  if (!phone) return <Table<T> columns={columns} scroll={scroll ?? { x: 'max-content' }} {...rest} />;
  const cardColumn: ColumnType<T> = {
    title: cardTitle,
    key: 'card',
    render: (_: unknown, row: T, index: number) => (card ? card(row, index) : <FactsCard row={row} index={index} columns={columns} />),
  };
  return <Table<T> columns={[cardColumn]} {...rest} />;
}

function FactsCard<T extends object>({ row, index, columns }: { row: T; index: number; columns: NonNullable<TableProps<T>['columns']> }) {
  return (
    <dl className="tg-phone-card" data-testid="phone-card">
      {columns.map((col, i) => {
        const c = col as ColumnType<T>;
        const value = cellValue(c, row, index);
        if (value === null || value === undefined || value === '') return null;
        const title = typeof c.title === 'function' ? c.title({}) : c.title;
        return (
          <div key={String(c.key ?? i)} className="tg-phone-card-fact" data-fact={String(c.key ?? i)}>
            <dt>{title}</dt>
            <dd>{value}</dd>
          </div>
        );
      })}
    </dl>
  );
}

/** What the column's cell would show: its render of the value at dataIndex, else the value itself. */
function cellValue<T extends object>(col: ColumnType<T>, row: T, index: number): ReactNode {
  const path = col.dataIndex === undefined ? [] : Array.isArray(col.dataIndex) ? col.dataIndex : [col.dataIndex];
  let value: unknown = path.length ? row : undefined;
  for (const key of path) value = value == null ? undefined : (value as Record<string | number, unknown>)[key as string | number];
  if (!col.render) return value as ReactNode;
  const out = col.render(value, row, index) as unknown;
  // A render may return { children, props } (cell props); the card wants the children.
  if (out && typeof out === 'object' && !isValidElement(out) && 'children' in (out as object)) return (out as { children: ReactNode }).children;
  return out as ReactNode;
}
