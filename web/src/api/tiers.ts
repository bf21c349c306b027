import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './http';
import type { Tier, TierInput } from './types';

const tiersKey = ['admin-tiers'] as const;

export function useTiers(enabled = true) {
  return useQuery({
    queryKey: tiersKey,
    queryFn: () => api.get<Tier[]>('/api/admin/tiers'),
    enabled,
  });
}

function useInvalidateTiers() {
  const qc = useQueryClient();
  return () => qc.invalidateQueries({ queryKey: tiersKey });
}

export function useCreateTier() {
  const invalidate = useInvalidateTiers();
  return useMutation({
    mutationFn: (body: TierInput) => api.post<Tier>('/api/admin/tiers', body),
    onSuccess: invalidate,
  });
}

export function useUpdateTier() {
  const invalidate = useInvalidateTiers();
  return useMutation({
    mutationFn: ({ name, body }: { name: string; body: TierInput }) =>
      api.patch<Tier>(`/api/admin/tiers/${encodeURIComponent(name)}`, body),
    onSuccess: invalidate,
  });
}

export function useDeleteTier() {
  const invalidate = useInvalidateTiers();
  return useMutation({
    mutationFn: (name: string) => api.del(`/api/admin/tiers/${encodeURIComponent(name)}`),
    onSuccess: invalidate,
  });
}
