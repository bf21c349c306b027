import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './http';
import { stepUpHeaders } from './stepUp';
import type { Page, PageQuery, Token, TokenInput } from './types';

const tokensKey = ['tokens'] as const;

export function useTokens(query: PageQuery) {
  return useQuery({
    queryKey: [...tokensKey, query],
    queryFn: () => api.get<Page<Token>>('/api/tokens', { ...query }),
    placeholderData: keepPreviousData,
  });
}

/** Every key of the caller, for pickers (first 100). */
export function useAllTokens() {
  return useQuery({
    queryKey: [...tokensKey, 'all'],
    queryFn: () => api.get<Page<Token>>('/api/tokens', { page: 1, size: 100 }),
    staleTime: 30_000,
  });
}

function useInvalidateTokens() {
  const qc = useQueryClient();
  return () => qc.invalidateQueries({ queryKey: tokensKey });
}

export function useCreateToken() {
  const invalidate = useInvalidateTokens();
  return useMutation({
    mutationFn: (body: TokenInput) => api.post<Token>('/api/tokens', body),
    onSuccess: invalidate,
  });
}

export function useUpdateToken() {
  const invalidate = useInvalidateTokens();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: TokenInput }) => api.patch<Token>(`/api/tokens/${id}`, body),
    onSuccess: invalidate,
  });
}

export function useDeleteToken() {
  const invalidate = useInvalidateTokens();
  return useMutation({
    mutationFn: (id: number) => api.del(`/api/tokens/${id}`),
    onSuccess: invalidate,
  });
}

export function useRevealToken() {
  return useMutation({
    mutationFn: ({ id, code }: { id: number; code?: string }) =>
      api.request<{ key: string }>('POST', `/api/tokens/${id}/reveal`, { headers: stepUpHeaders(code) }),
  });
}

export interface AdminTokenQuery extends PageQuery {
  user_id?: number;
}

/** Every user's keys (admin). */
export function useAdminTokens(query: AdminTokenQuery) {
  return useQuery({
    queryKey: ['admin-tokens', query],
    queryFn: () => api.get<Page<Token>>('/api/admin/tokens', { ...query }),
    placeholderData: keepPreviousData,
  });
}

/** Enables or disables anyone's key (admin). */
export function useSetAdminTokenStatus() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, status }: { id: number; status: Token['status'] }) =>
      api.patch<Token>(`/api/admin/tokens/${id}`, { status }),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['admin-tokens'] }),
  });
}
