import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './http';
import type { Group } from './types';

const groupsKey = ['admin-groups'] as const;

export function useGroups(enabled = true) {
  return useQuery({
    queryKey: groupsKey,
    queryFn: () => api.get<Group[]>('/api/admin/groups'),
    enabled,
  });
}

function useInvalidateGroups() {
  const qc = useQueryClient();
  return () => {
    void qc.invalidateQueries({ queryKey: ['user-groups'] });
    return qc.invalidateQueries({ queryKey: groupsKey });
  };
}

export function useCreateGroup() {
  const invalidate = useInvalidateGroups();
  return useMutation({
    mutationFn: (group: Group) => api.post<Group>('/api/admin/groups', group),
    onSuccess: invalidate,
  });
}

export function useUpdateGroup() {
  const invalidate = useInvalidateGroups();
  return useMutation({
    mutationFn: ({ name, ...body }: Group) =>
      api.patch<Group>(`/api/admin/groups/${encodeURIComponent(name)}`, body),
    onSuccess: invalidate,
  });
}

export function useDeleteGroup() {
  const invalidate = useInvalidateGroups();
  return useMutation({
    mutationFn: (name: string) => api.del(`/api/admin/groups/${encodeURIComponent(name)}`),
    onSuccess: invalidate,
  });
}
