import dayjs from 'dayjs';
import type { LogStats, StatsRow } from '../../api/types';

export type DayRow = StatsRow & { date: string };

const EMPTY: StatsRow = { requests: 0, cost: 0, prompt_tokens: 0, completion_tokens: 0 };

/** One row per calendar day from `from` to `to` (inclusive), zero where the API had none. */
export function fillDays(days: LogStats['days'] | undefined, from: dayjs.Dayjs, to: dayjs.Dayjs): DayRow[] {
  const byDate = new Map((days ?? []).map((d) => [d.date.slice(0, 10), d]));
  const out: DayRow[] = [];
  for (let day = from.startOf('day'); !day.isAfter(to, 'day'); day = day.add(1, 'day')) {
    const date = day.format('YYYY-MM-DD');
    out.push({ ...EMPTY, ...byDate.get(date), date });
  }
  return out;
}

/** The time windows on the dashboard, as RFC 3339 strings. */
export function dashboardRanges(now = dayjs()) {
  return {
    today: { from: now.startOf('day').toISOString() },
    week: { from: now.subtract(6, 'day').startOf('day').toISOString() },
    month: { from: now.subtract(29, 'day').startOf('day').toISOString() },
  };
}
