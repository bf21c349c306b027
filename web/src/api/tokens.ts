import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './http';
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
    mutationFn: (id: number) => api.post<{ key: string }>(`/api/tokens/${id}/reveal`),
  });
}
