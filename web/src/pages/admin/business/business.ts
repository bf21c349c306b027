import dayjs, { type Dayjs } from 'dayjs';
import type { StatsFigures } from '../../../api/types';
import type { StatsRange } from '../../../api/stats';

/** The last `days` days, today included (local days); the page's default is 30. */
export function defaultBusinessRange(days = 30, now: Dayjs = dayjs()): [Dayjs, Dayjs] {
  return [now.subtract(days - 1, 'day').startOf('day'), now.endOf('day')];
}

/** A picked pair of days as the API's window: from the first day's start to the end of the last. */
export function toStatsRange([from, to]: [Dayjs, Dayjs]): StatsRange {
  return { from: from.startOf('day').toISOString(), to: to.endOf('day').add(1, 'millisecond').toISOString() };
}

export interface BusinessTotals {
  requests: number;
  revenue: number;
  upstream_cost: number;
  profit: number;
  /** profit / revenue (0 … 1, negative at a loss); null without revenue. */
  margin: number | null;
}

/** Sums of a report's items (the channel report covers every logged request once). */
export function totalsOf(items: readonly StatsFigures[] | undefined): BusinessTotals {
  const sum = { requests: 0, revenue: 0, upstream_cost: 0, profit: 0 };
  for (const it of items ?? []) {
    sum.requests += it.requests;
    sum.revenue += it.revenue;
    sum.upstream_cost += it.upstream_cost;
    sum.profit += it.profit;
  }
  return { ...sum, margin: sum.revenue > 0 ? sum.profit / sum.revenue : null };
}

/** The `n` items with the most revenue (ties by profit), most first. */
export function topBy<T extends StatsFigures>(items: readonly T[] | undefined, n = 10): T[] {
  return [...(items ?? [])].sort((a, b) => b.revenue - a.revenue || b.profit - a.profit).slice(0, n);
}

/** A numeric sorter for a figures column. */
export function figureSorter<T extends StatsFigures>(field: keyof StatsFigures) {
  return (a: T, b: T) => Number(a[field]) - Number(b[field]);
}
