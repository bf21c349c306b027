import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './http';
import type { Settings } from './types';

export function useSettings() {
  return useQuery({
    queryKey: ['admin-settings'],
    queryFn: () => api.get<Settings>('/api/admin/settings'),
  });
}

/** Saves a partial settings object. */
export function useSaveSettings() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: Partial<Settings>) => api.put<Settings>('/api/admin/settings', body),
    onSuccess: (settings) => {
      qc.setQueryData(['admin-settings'], settings);
      void qc.invalidateQueries({ queryKey: ['status'] });
    },
  });
}
