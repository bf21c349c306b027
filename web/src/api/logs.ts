import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { api } from './http';
import type { LogFilter, LogPage, LogStats, LogTotals } from './types';

const PAGE_LIMIT = 50;

/** Usage logs with cursor pagination; `admin` reads everyone's. */
export function useLogs(filter: LogFilter, admin = false) {
  const path = admin ? '/api/admin/logs' : '/api/logs';
  return useInfiniteQuery({
    queryKey: ['logs', admin, filter],
    initialPageParam: undefined as number | undefined,
    queryFn: ({ pageParam }) =>
      api.get<LogPage>(path, { ...filter, cursor: pageParam, limit: PAGE_LIMIT }),
    // null marks the last page; a 0 would mean "from the newest" again, so it must never be followed.
    getNextPageParam: (last) => (last.next_cursor && (last.items ?? []).length > 0 ? last.next_cursor : undefined),
  });
}

/** Sums per day and per model for the charts. */
export function useLogStats(range: { from?: string; to?: string; user_id?: number }, admin = false) {
  const path = admin ? '/api/admin/logs/stats' : '/api/logs/stats';
  return useQuery({
    queryKey: ['log-stats', admin, range],
    queryFn: () => api.get<LogStats>(path, range),
    staleTime: 30_000,
  });
}

/** Count, tokens and cost of every row the filter lists (the logs page's totals line). */
export function useLogTotals(filter: LogFilter, admin = false) {
  const path = admin ? '/api/admin/logs/totals' : '/api/logs/totals';
  return useQuery({
    queryKey: ['log-totals', admin, filter],
    queryFn: () => api.get<LogTotals>(path, { ...filter }),
    staleTime: 10_000,
  });
}

/** The export's URL path for the same filter (streamed CSV). */
export function logExportPath(admin: boolean): string {
  return admin ? '/api/admin/logs/export' : '/api/logs/export';
}
