import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api } from './http';
import type { ChannelStats, DayStats, ModelStats, StatsOverview, StatsReport, UserStats } from './types';

export interface StatsRange {
  /** RFC 3339. */
  from: string;
  to: string;
}

interface StatsKinds {
  channels: ChannelStats;
  models: ModelStats;
  days: DayStats;
  users: UserStats;
}

/** The admin's business report over a window: per channel, model, UTC day or (top) user. */
export function useBusinessStats<K extends keyof StatsKinds>(kind: K, range: StatsRange, extra: { limit?: number } = {}) {
  return useQuery({
    queryKey: ['business-stats', kind, range, extra],
    queryFn: () => api.get<StatsReport<StatsKinds[K]>>(`/api/admin/stats/${kind}`, { ...range, ...extra }),
    placeholderData: keepPreviousData,
    staleTime: 30_000,
  });
}

/** Site-wide figures beside the reports: active users and keys, failed upstream attempts by class. */
export function useStatsOverview(range: StatsRange) {
  return useQuery({
    queryKey: ['business-stats', 'overview', range],
    queryFn: () => api.get<StatsOverview>('/api/admin/stats/overview', { ...range }),
    placeholderData: keepPreviousData,
    staleTime: 30_000,
  });
}
