import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './http';
import type {
  CreatedBatch,
  Page,
  PageQuery,
  PaymentProvider,
  Redemption,
  RedemptionBatch,
  RedemptionBatchInput,
  RedemptionStatus,
  TopupOrder,
  TopupStatus,
} from './types';

const redemptionsKey = ['admin-redemptions'] as const;

export interface RedemptionQuery extends PageQuery {
  batch?: string;
  status?: RedemptionStatus;
}

export function useRedemptions(query: RedemptionQuery) {
  return useQuery({
    queryKey: [...redemptionsKey, query],
    queryFn: () => api.get<Page<Redemption>>('/api/admin/redemptions', { ...query }),
    placeholderData: keepPreviousData,
  });
}

export function useCreateBatch() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: RedemptionBatchInput) => api.post<CreatedBatch>('/api/admin/redemptions', body),
    onSuccess: () => qc.invalidateQueries({ queryKey: redemptionsKey }),
  });
}

export function useSetRedemptionStatus() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, status }: { id: number; status: RedemptionStatus }) =>
      api.patch<Redemption>(`/api/admin/redemptions/${id}`, { status }),
    onSuccess: () => qc.invalidateQueries({ queryKey: redemptionsKey }),
  });
}

export function useDeleteRedemption() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => api.del(`/api/admin/redemptions/${id}`),
    onSuccess: () => qc.invalidateQueries({ queryKey: redemptionsKey }),
  });
}

/** Batches, newest first, with their counts (for the batch filter). */
export function useRedemptionBatches() {
  return useQuery({
    queryKey: [...redemptionsKey, 'batches'],
    queryFn: () => api.get<Page<RedemptionBatch>>('/api/admin/redemptions/batches', { page: 1, size: 100 }),
  });
}

export interface AdminTopupQuery extends PageQuery {
  status?: TopupStatus;
  provider?: PaymentProvider;
  user_id?: number;
}

export function useAdminTopups(query: AdminTopupQuery) {
  return useQuery({
    queryKey: ['admin-topups', query],
    queryFn: () => api.get<Page<TopupOrder>>('/api/admin/topups', { ...query }),
    placeholderData: keepPreviousData,
  });
}

export function useAdminTopup(orderNo: string | null) {
  return useQuery({
    queryKey: ['admin-topups', 'one', orderNo],
    queryFn: () => api.get<TopupOrder>(`/api/admin/topups/${encodeURIComponent(orderNo ?? '')}`),
    enabled: !!orderNo,
  });
}
