import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './http';
import type { LogicalGroup, LogicalGroupDefaults, LogicalGroupInput, StickyView } from './types';

const logicalGroupsKey = ['admin-logical-groups'] as const;
const path = (name: string) => `/api/admin/logical-groups/${encodeURIComponent(name)}`;

export function useLogicalGroups(enabled = true) {
  return useQuery({
    queryKey: logicalGroupsKey,
    queryFn: () => api.get<LogicalGroup[]>('/api/admin/logical-groups'),
    enabled,
  });
}

/** The site defaults shown beside a group's policy fields. */
export function useLogicalGroupDefaults(enabled = true) {
  return useQuery({
    queryKey: [...logicalGroupsKey, 'defaults'],
    queryFn: () => api.get<LogicalGroupDefaults>('/api/admin/logical-groups/defaults'),
    enabled,
    staleTime: 60_000,
  });
}

function useInvalidateLogicalGroups() {
  const qc = useQueryClient();
  return () => {
    void qc.invalidateQueries({ queryKey: ['user-groups'] });
    void qc.invalidateQueries({ queryKey: ['admin-groups'] });
    return qc.invalidateQueries({ queryKey: logicalGroupsKey });
  };
}

export function useCreateLogicalGroup() {
  const invalidate = useInvalidateLogicalGroups();
  return useMutation({
    mutationFn: (group: LogicalGroupInput) => api.post<LogicalGroup>('/api/admin/logical-groups', group),
    onSuccess: invalidate,
  });
}

export function useUpdateLogicalGroup() {
  const invalidate = useInvalidateLogicalGroups();
  return useMutation({
    mutationFn: ({ name, body }: { name: string; body: Partial<LogicalGroupInput> }) => api.patch<LogicalGroup>(path(name), body),
    onSuccess: invalidate,
  });
}

export function useDeleteLogicalGroup() {
  const invalidate = useInvalidateLogicalGroups();
  return useMutation({
    mutationFn: (name: string) => api.del(path(name)),
    onSuccess: invalidate,
  });
}

/** Live sticky bindings of a group (optionally one model), counted per route. */
export function useStickyView(group: string | null, model?: string) {
  return useQuery({
    queryKey: ['admin-sticky', group, model ?? ''],
    queryFn: () => api.get<StickyView>('/api/admin/sticky', { group: group ?? '', model: model || undefined }),
    enabled: !!group,
  });
}
