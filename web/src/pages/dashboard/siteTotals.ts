import type { DayStats } from '../../api/types';

export interface SiteTotals {
  requests: number;
  successes: number;
  revenue: number;
  upstream_cost: number;
  profit: number;
  /** successes / requests; null without requests (shown as "no data", never 100 %). */
  successRate: number | null;
}

/** Sums of the days report, which counts every relayed request of the window once (channel tests left out). */
export function siteTotals(days: readonly DayStats[] | undefined): SiteTotals {
  const t = { requests: 0, successes: 0, revenue: 0, upstream_cost: 0, profit: 0 };
  for (const d of days ?? []) {
    t.requests += d.requests;
    t.successes += d.successes ?? 0;
    t.revenue += d.revenue;
    t.upstream_cost += d.upstream_cost;
    t.profit += d.profit;
  }
  return { ...t, successRate: t.requests > 0 ? t.successes / t.requests : null };
}
