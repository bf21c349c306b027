import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from './http';
import type { AlertLog, AlertLogPage } from './types';

export interface AlertFilter {
  event?: string;
  /** webhook or email. */
  channel?: string;
  status?: string;
}

const PAGE_LIMIT = 50;

/** Sent alerts, newest first, with cursor pagination like the usage logs. */
export function useAlertLogs(filter: AlertFilter) {
  return useInfiniteQuery({
    queryKey: ['alert-logs', filter],
    initialPageParam: undefined as number | undefined,
    queryFn: ({ pageParam }) => api.get<AlertLogPage>('/api/admin/alerts', { ...filter, cursor: pageParam, limit: PAGE_LIMIT }),
    getNextPageParam: (last) => (last.next_cursor && (last.items ?? []).length > 0 ? last.next_cursor : undefined),
  });
}

/** Sends a test alert through the saved webhooks or e-mail now; answers the delivery rows. */
export function useTestAlert() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (channel: 'webhook' | 'email') => api.post<{ items: AlertLog[] }>('/api/admin/alerts/test', { channel }),
    onSettled: () => qc.invalidateQueries({ queryKey: ['alert-logs'] }),
  });
}
