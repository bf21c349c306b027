import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './http';
import type { Page, PageQuery, Role, EnabledStatus, User } from './types';

const usersKey = ['admin-users'] as const;

export interface UserQuery extends PageQuery {
  role?: Role;
  status?: EnabledStatus;
}

export function useUsers(query: UserQuery) {
  return useQuery({
    queryKey: [...usersKey, query],
    queryFn: () => api.get<Page<User>>('/api/admin/users', { ...query }),
    placeholderData: keepPreviousData,
  });
}

export interface UserPatch {
  role?: Role;
  group?: string;
  /** The price tier ("" = none). */
  tier?: string;
  status?: EnabledStatus;
  email?: string;
  /** Requests / tokens per minute for all of the user's keys together (0 = no limit). */
  rpm?: number;
  tpm?: number;
}

export function useUpdateUser() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: UserPatch }) => api.patch<User>(`/api/admin/users/${id}`, body),
    onSuccess: () => qc.invalidateQueries({ queryKey: usersKey }),
  });
}

/** Adds (or with a negative delta removes) balance, with a reason for the audit log. */
export function useAdjustQuota() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, delta, reason }: { id: number; delta: number; reason: string }) =>
      api.post<User>(`/api/admin/users/${id}/quota`, { delta, reason }),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ['self'] });
      return qc.invalidateQueries({ queryKey: usersKey });
    },
  });
}

export interface NewUser {
  username: string;
  password: string;
  email?: string;
  role?: Role;
  group?: string;
  /** Starting balance in units, credited as an admin adjustment. */
  quota?: number;
}

/** Creates a user (POST /api/admin/users). */
export function useCreateUser() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: NewUser) => api.post<User>('/api/admin/users', body),
    onSuccess: () => qc.invalidateQueries({ queryKey: usersKey }),
  });
}

/** Deletes a user: the account is closed and anonymised; its balance, credits and logs stay. */
export function useDeleteUser() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => api.del(`/api/admin/users/${id}`),
    onSuccess: () => qc.invalidateQueries({ queryKey: usersKey }),
  });
}
