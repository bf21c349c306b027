import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './http';
import { stepUpHeaders } from './stepUp';
import type { LoginResponse, SiteStatus, User, UserGroup } from './types';

export const selfKey = ['self'] as const;

/** Public site status: registration open, site name, notice. */
export function useSiteStatus() {
  return useQuery({
    queryKey: ['status'],
    queryFn: () => api.get<SiteStatus>('/api/status'),
    staleTime: 60_000,
  });
}

/** The signed-in user (balance, role, group); only runs with a session. */
export function useSelf(enabled = true) {
  return useQuery({
    queryKey: selfKey,
    queryFn: () => api.get<User>('/api/user/self'),
    enabled,
    // The balance changes behind the page's back (an admin's top-up, calls made with the keys): read it again
    // whenever the window comes back and every half minute while it is open.
    refetchOnWindowFocus: 'always',
    refetchInterval: 30_000,
  });
}

export interface Credentials {
  username: string;
  password: string;
  /** The captcha token (asked for after failed sign-ins when a captcha is configured). */
  captcha?: string;
}

/** Signs in and installs the session in the client. */
export function useLogin() {
  return useMutation({
    mutationFn: async (body: Credentials) => {
      const session = await api.post<LoginResponse>('/api/auth/login', body, { retryOn401: false });
      api.setSession(session);
      return session;
    },
  });
}

export interface Registration extends Credentials {
  email?: string;
  /** The inviter's code from an invite link (`/register?aff=CODE`). */
  aff_code?: string;
  /** The language of the account's e-mails. */
  language?: string;
}

export function useRegister() {
  return useMutation({
    mutationFn: (body: Registration) =>
      api.post<{ user: User }>('/api/auth/register', body, { retryOn401: false }),
  });
}

/** Revokes the refresh cookie; the session is cleared even when the server call fails. */
export async function logout(): Promise<void> {
  try {
    await api.post<void>('/api/auth/logout', undefined, { retryOn401: false });
  } finally {
    api.setSession(null);
  }
}

export function useChangePassword() {
  return useMutation({
    mutationFn: ({ code, ...body }: { old_password: string; new_password: string; code?: string }) =>
      api.request<void>('POST', '/api/user/password', { body, headers: stepUpHeaders(code) }),
  });
}

/** Groups the caller may pick for a key. */
export function useUserGroups(enabled = true) {
  return useQuery({
    queryKey: ['user-groups'],
    queryFn: () => api.get<UserGroup[]>('/api/user/groups'),
    enabled,
  });
}

/** The caller's own edit of their profile (PATCH /api/user/self); absent fields stay. */
export interface SelfInput {
  /** Units; 0 = off. */
  balance_alert?: number;
  language?: string;
  email?: string;
}

export function useUpdateSelf() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ code, ...body }: SelfInput & { code?: string }) =>
      api.request<User>('PATCH', '/api/user/self', { body, headers: stepUpHeaders(code) }),
    onSuccess: (user) => qc.setQueryData(selfKey, user),
  });
}
