import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { selfKey } from './auth';
import { api } from './http';
import type { CreatedTopup, InviteSummary, Page, PageQuery, PaymentProvider, RedeemResult, TopupOptions, TopupOrder } from './types';

const topupsKey = ['topups'] as const;

/** Refreshes everything that shows the caller's balance or orders. */
export function useInvalidateBalance() {
  const qc = useQueryClient();
  return () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: selfKey }),
      qc.invalidateQueries({ queryKey: topupsKey }),
      qc.invalidateQueries({ queryKey: ['invites'] }),
    ]);
}

/** Enabled providers with their methods, currency, rate and limits, plus presets and bonus tiers. */
export function useTopupOptions() {
  return useQuery({
    queryKey: ['topup-options'],
    queryFn: () => api.get<TopupOptions>('/api/user/topup/options'),
  });
}

export interface TopupRequest {
  provider: PaymentProvider;
  method?: string;
  amount: string;
}

export function useCreateTopup() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: TopupRequest) => api.post<CreatedTopup>('/api/user/topup', body),
    onSuccess: () => qc.invalidateQueries({ queryKey: topupsKey }),
  });
}

export function useMyTopups(query: PageQuery) {
  return useQuery({
    queryKey: [...topupsKey, query],
    queryFn: () => api.get<Page<TopupOrder>>('/api/user/topups', { ...query }),
    placeholderData: keepPreviousData,
  });
}

/** Whether an order is still waiting for the provider. */
export const isFinalStatus = (status: string | undefined) => status === 'paid' || status === 'failed' || status === 'expired';

/** One of the caller's orders, polled every `interval` ms until it is paid, failed or expired. */
export function useMyTopup(orderNo: string | null, interval = 2000) {
  return useQuery({
    queryKey: [...topupsKey, 'one', orderNo],
    queryFn: () => api.get<TopupOrder>(`/api/user/topups/${encodeURIComponent(orderNo ?? '')}`),
    enabled: !!orderNo,
    refetchInterval: (query) => (isFinalStatus(query.state.data?.status) || query.state.error ? false : interval),
  });
}

export function useRedeem() {
  const invalidate = useInvalidateBalance();
  return useMutation({
    mutationFn: (code: string) => api.post<RedeemResult>('/api/user/redeem', { code }),
    onSuccess: () => invalidate(),
  });
}

export function useInvites() {
  return useQuery({
    queryKey: ['invites'],
    queryFn: () => api.get<InviteSummary>('/api/user/invites'),
  });
}
