import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from './http';
import { selfKey } from './auth';
import { stepUpHeaders } from './stepUp';
import type { User } from './types';

/** Asks for a sign-up code again (verify) or a reset link (reset); answers the same for unknown addresses. */
export function useSendEmail() {
  return useMutation({
    mutationFn: (body: { email: string; purpose: 'verify' | 'reset'; captcha?: string }) =>
      api.post<{ accepted: boolean }>('/api/auth/email/send', body, { retryOn401: false }),
  });
}

/** Enters a sign-up code: the account becomes usable. */
export function useVerifyEmail() {
  return useMutation({
    mutationFn: (body: { email: string; code: string }) =>
      api.post<{ user: User }>('/api/auth/email/verify', body, { retryOn401: false }),
  });
}

/** Sets a new password with the token of a reset link. */
export function useResetPassword() {
  return useMutation({
    mutationFn: (body: { token: string; new_password: string }) =>
      api.post<void>('/api/auth/password/reset', body, { retryOn401: false }),
  });
}

/** Sends a code to the address the signed-in user wants instead of theirs. */
export function useSendEmailChange() {
  return useMutation({
    mutationFn: (body: { email: string }) => api.post<void>('/api/user/email/send', body),
  });
}

/** Applies the new address with its code. */
export function useChangeEmail() {
  const qc = useQueryClient();
  return useMutation({
    // With 2FA on the change also needs a fresh authenticator code (step-up, X-Tollgate-TOTP).
    mutationFn: ({ totp, ...body }: { email: string; code: string; totp?: string }) =>
      api.request<User>('POST', '/api/user/email/change', { body, headers: stepUpHeaders(totp) }),
    onSuccess: (user) => qc.setQueryData(selfKey, user),
  });
}

/** Sends the SMTP test e-mail (to the admin's own address when `to` is empty). */
export function useSmtpTest() {
  return useMutation({
    mutationFn: (to: string) => api.post<{ to: string }>('/api/admin/settings/smtp/test', to ? { to } : {}),
  });
}
