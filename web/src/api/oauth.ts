import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './http';
import type { IdentitiesResponse } from './types/oauth';

const identitiesKey = ['identities'] as const;

/** Where the browser goes to sign in with a provider (a full-page navigation, not a fetch). */
export function oauthStartURL(slug: string): string {
  return `/api/auth/oauth/${encodeURIComponent(slug)}/start`;
}

/** The signed-in user's linked provider accounts. */
export function useIdentities() {
  return useQuery({
    queryKey: identitiesKey,
    queryFn: () => api.get<IdentitiesResponse>('/api/user/identities'),
  });
}

/** Starts linking a provider: the answer's URL is where the browser must go next. */
export function useLinkProvider() {
  return useMutation({
    mutationFn: (slug: string) => api.post<{ url: string }>(`/api/user/oauth/${encodeURIComponent(slug)}/link/start`),
  });
}

export function useUnlinkIdentity() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => api.del(`/api/user/identities/${id}`),
    onSuccess: () => void qc.invalidateQueries({ queryKey: identitiesKey }),
  });
}
