import dayjs from 'dayjs';
import { describe, expect, it } from 'vitest';
import type { StatsFigures } from '../../../api/types';
import { defaultBusinessRange, figureSorter, topBy, toStatsRange, totalsOf } from './business';

const fig = (revenue: number, upstream_cost: number, requests = 1): StatsFigures => ({
  requests,
  successes: requests,
  success_rate: 1,
  p50_ms: 0,
  p95_ms: 0,
  first_byte_p50_ms: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  revenue,
  upstream_cost,
  profit: revenue - upstream_cost,
});

describe('business report logic', () => {
  it('defaults to the last 30 days, today included, and sends whole days', () => {
    const now = dayjs('2026-12-02T10:00:00');
    const [from, to] = defaultBusinessRange(30, now);
    expect(from.format('YYYY-MM-DD HH:mm')).toBe('2026-11-03 00:00');
    expect(to.format('YYYY-MM-DD')).toBe('2026-12-02');
    const range = toStatsRange([from, to]);
    expect(dayjs(range.to).diff(dayjs(range.from), 'day')).toBe(30);
  });

  it('sums revenue, cost and profit, with the margin only when there is revenue', () => {
    expect(totalsOf([fig(75_000, 50_000, 100), fig(25_000, 30_000, 10)])).toEqual({
      requests: 110,
      revenue: 100_000,
      upstream_cost: 80_000,
      profit: 20_000,
      margin: 0.2,
    });
    expect(totalsOf([]).margin).toBeNull();
  });

  it('ranks by revenue and sorts columns numerically', () => {
    const items = [{ ...fig(1, 0), model: 'a' }, { ...fig(9, 0), model: 'b' }, { ...fig(5, 0), model: 'c' }];
    expect(topBy(items, 2).map((i) => i.model)).toEqual(['b', 'c']);
    expect([...items].sort(figureSorter('revenue')).map((i) => i.model)).toEqual(['a', 'c', 'b']);
  });
});
