import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './http';
import type { EffectivePrice, PriceRow } from './types';

/** Effective prices for the caller's group. */
export function usePricing(enabled = true) {
  return useQuery({
    queryKey: ['pricing'],
    queryFn: () => api.get<EffectivePrice[]>('/api/pricing'),
    enabled,
    staleTime: 60_000,
  });
}

export function useAdminPricing() {
  return useQuery({
    queryKey: ['admin-pricing'],
    queryFn: () => api.get<PriceRow[]>('/api/admin/pricing'),
  });
}

/** Replaces the whole price table. */
export function useSavePricing() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (rows: PriceRow[]) => api.put<PriceRow[]>('/api/admin/pricing', rows),
    onSuccess: (rows) => {
      qc.setQueryData(['admin-pricing'], rows);
      void qc.invalidateQueries({ queryKey: ['pricing'] });
    },
  });
}
