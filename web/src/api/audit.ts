import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api } from './http';
import type { AuditEntry, Page, PageQuery } from './types';

export interface AuditQuery extends PageQuery {
  actor_id?: number;
  action?: string;
}

export function useAuditLog(query: AuditQuery) {
  return useQuery({
    queryKey: ['audit', query],
    queryFn: () => api.get<Page<AuditEntry>>('/api/admin/audit', { ...query }),
    placeholderData: keepPreviousData,
  });
}
