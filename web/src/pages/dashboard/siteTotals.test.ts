import { describe, expect, it } from 'vitest';
import type { DayStats } from '../../api/types';
import { siteTotals } from './siteTotals';

const day = (date: string, requests: number, successes: number, revenue: number, upstream_cost: number): DayStats => ({
  date,
  requests,
  successes,
  success_rate: requests ? successes / requests : 0,
  p50_ms: 0,
  p95_ms: 0,
  first_byte_p50_ms: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  revenue,
  upstream_cost,
  profit: revenue - upstream_cost,
});

describe('siteTotals', () => {
  it('sums the days and takes the success rate from the counts', () => {
    const got = siteTotals([day('2026-12-01', 3, 2, 150, 100), day('2026-12-02', 1, 1, 50, 70)]);
    expect(got).toEqual({ requests: 4, successes: 3, revenue: 200, upstream_cost: 170, profit: 30, successRate: 0.75 });
  });
  it('has no success rate without requests (not 100 %)', () => {
    expect(siteTotals([day('2026-12-01', 0, 0, 0, 0)]).successRate).toBeNull();
    expect(siteTotals(undefined).successRate).toBeNull();
  });
});
