import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './http';
import type {
  CreatedBatch,
  Page,
  PageQuery,
  PaymentProvider,
  Redemption,
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

/** The batch name a create answered (`batch` may be a name or an object). */
export function batchName(created: CreatedBatch): string {
  const b = created.batch;
  if (typeof b === 'string') return b;
  return String(b?.name ?? b?.id ?? '');
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
