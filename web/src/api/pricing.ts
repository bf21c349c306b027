import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './http';
import type { EffectivePrice, PriceRow, PricingImportResult } from './types';

/** Effective prices for the caller's group. */
export function usePricing(enabled = true) {
  return useQuery({
    queryKey: ['pricing'],
    queryFn: () => api.get<EffectivePrice[]>('/api/pricing'),
    enabled,
    staleTime: 60_000,
  });
}

/** What the caller pays per model in `group` (their own when empty) and their tier; `q` filters by model. */
export function usePricingFor({ group, q }: { group?: string; q?: string }) {
  return useQuery({
    queryKey: ['pricing', 'for', group ?? '', q ?? ''],
    queryFn: () => api.get<EffectivePrice[]>('/api/pricing', { group: group || undefined, q: q || undefined }),
    staleTime: 60_000,
    placeholderData: keepPreviousData,
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

export type ImportMode = 'merge' | 'replace';

/**
 * Imports a price file (new-api's ratio format or ours), sent as is: a dry run answers the counts and the
 * resulting table without saving; otherwise the table is replaced by the result.
 */
export function useImportPricing() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ file, mode, dryRun }: { file: unknown; mode: ImportMode; dryRun: boolean }) =>
      api.post<PricingImportResult>('/api/admin/pricing/import', file, { query: { mode, dry_run: dryRun ? 1 : undefined } }),
    onSuccess: (res) => {
      if (res.dry_run) return;
      void qc.invalidateQueries({ queryKey: ['admin-pricing'] });
      void qc.invalidateQueries({ queryKey: ['pricing'] });
    },
  });
}
