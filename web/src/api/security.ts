import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './http';
import { selfKey } from './auth';
import type { LoginResponse } from './types';

export interface TwoFactorStatus {
  enabled: boolean;
  backup_codes_left: number;
}

export interface TwoFactorSetup {
  secret: string;
  otpauth_url: string;
}

export interface SessionInfo {
  id: number;
  device: string;
  user_agent: string;
  ip: string;
  created_at: string;
  last_seen: string;
  current: boolean;
}

const twoFactorKey = ['2fa'] as const;
const sessionsKey = ['sessions'] as const;

export function useTwoFactor() {
  return useQuery({ queryKey: twoFactorKey, queryFn: () => api.get<TwoFactorStatus>('/api/user/2fa') });
}

export function useTwoFactorSetup() {
  return useMutation({ mutationFn: () => api.post<TwoFactorSetup>('/api/user/2fa/setup') });
}

function useTwoFactorChange<T>(path: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (code: string) => api.post<T>(path, { code }),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: twoFactorKey });
      void qc.invalidateQueries({ queryKey: selfKey });
    },
  });
}

export function useTwoFactorEnable() {
  return useTwoFactorChange<{ backup_codes: string[] }>('/api/user/2fa/enable');
}

export function useTwoFactorDisable() {
  return useTwoFactorChange<void>('/api/user/2fa/disable');
}

/** The second sign-in step: a ticket from the password step and a TOTP or backup code. */
export function useLoginTotp() {
  return useMutation({
    mutationFn: async (body: { ticket: string; totp: string }) => {
      const session = await api.post<LoginResponse>('/api/auth/login/totp', body, { retryOn401: false });
      api.setSession(session);
      return session;
    },
  });
}

export function useSessions() {
  return useQuery({
    queryKey: sessionsKey,
    queryFn: () => api.get<{ items: SessionInfo[] }>('/api/user/sessions').then((r) => r.items),
  });
}

export function useEndSession() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => api.del(`/api/user/sessions/${id}`),
    onSuccess: () => qc.invalidateQueries({ queryKey: sessionsKey }),
  });
}

export function useEndOtherSessions() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => api.del<{ ended: number }>('/api/user/sessions'),
    onSuccess: () => qc.invalidateQueries({ queryKey: sessionsKey }),
  });
}

const userSessionsKey = (id: number) => ['admin-user-sessions', id] as const;

export function useUserSessions(id: number, enabled = true) {
  return useQuery({
    queryKey: userSessionsKey(id),
    queryFn: () => api.get<{ items: SessionInfo[] }>(`/api/admin/users/${id}/sessions`).then((r) => r.items),
    enabled,
  });
}

export function useEndUserSessions(id: number) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: () => api.del<{ ended: number }>(`/api/admin/users/${id}/sessions`),
    onSuccess: () => qc.invalidateQueries({ queryKey: userSessionsKey(id) }),
  });
}

export function useResetUserTwoFactor() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => api.del(`/api/admin/users/${id}/2fa`),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['users'] }),
  });
}
