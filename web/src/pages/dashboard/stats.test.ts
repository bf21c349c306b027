import dayjs from 'dayjs';
import { describe, expect, it } from 'vitest';
import { dashboardRanges, fillDays } from './stats';

describe('fillDays', () => {
  it('has one row per day, zero where the API had none', () => {
    const rows = fillDays(
      [{ date: '2026-11-28', requests: 3, cost: 150, prompt_tokens: 30, completion_tokens: 60 }],
      dayjs('2026-11-26'),
      dayjs('2026-11-29'),
    );
    expect(rows.map((r) => [r.date, r.cost])).toEqual([
      ['2026-11-26', 0],
      ['2026-11-27', 0],
      ['2026-11-28', 150],
      ['2026-11-29', 0],
    ]);
  });

  it('accepts RFC 3339 dates from the API', () => {
    const rows = fillDays(
      [{ date: '2026-11-29T00:00:00Z', requests: 1, cost: 50, prompt_tokens: 10, completion_tokens: 20 }],
      dayjs('2026-11-29'),
      dayjs('2026-11-29'),
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].requests).toBe(1);
  });
});

describe('dashboardRanges', () => {
  it('starts today, 7 days and 30 days back at midnight', () => {
    const now = dayjs('2026-11-29T15:30:00');
    const r = dashboardRanges(now);
    expect(dayjs(r.today.from).format('YYYY-MM-DD HH:mm')).toBe('2026-11-29 00:00');
    expect(dayjs(r.week.from).format('YYYY-MM-DD')).toBe('2026-11-23');
    expect(dayjs(r.month.from).format('YYYY-MM-DD')).toBe('2026-10-31');
  });
});
