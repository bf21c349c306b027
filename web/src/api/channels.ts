import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './http';
import { stepUpHeaders } from './stepUp';
import type {
  BreakerAction,
  Channel,
  ChannelHealth,
  ChannelInput,
  ChannelTestJob,
  ChannelTestResult,
  Page,
  PageQuery,
} from './types';

const channelsKey = ['channels'] as const;

export interface ChannelQuery extends PageQuery {
  type?: string;
  status?: string;
  group?: string;
  model?: string;
  tag?: string;
}

export function useChannels(query: ChannelQuery) {
  return useQuery({
    queryKey: [...channelsKey, query],
    queryFn: () => api.get<Page<Channel>>('/api/admin/channels', { ...query }),
    placeholderData: keepPreviousData,
  });
}

/** Every channel as id + name, for pickers (up to 1,000, fetched a page of 100 at a time). */
export function useChannelOptions(enabled = true) {
  return useQuery({
    queryKey: [...channelsKey, 'options'],
    queryFn: async () => {
      const all: Channel[] = [];
      for (let page = 1; page <= 10; page++) {
        const res = await api.get<Page<Channel>>('/api/admin/channels', { page, size: 100 });
        all.push(...(res.items ?? []));
        if (all.length >= res.total || (res.items ?? []).length === 0) break;
      }
      return all;
    },
    enabled,
    staleTime: 30_000,
  });
}

export function useChannelHealth(id: number, enabled = true) {
  return useQuery({
    queryKey: ['channel-health', id],
    queryFn: () => api.get<ChannelHealth>(`/api/admin/channels/${id}/health`),
    enabled,
    staleTime: 5_000,
  });
}

function useInvalidateChannels() {
  const qc = useQueryClient();
  return () => {
    void qc.invalidateQueries({ queryKey: ['channel-health'] });
    return qc.invalidateQueries({ queryKey: channelsKey });
  };
}

export function useCreateChannel() {
  const invalidate = useInvalidateChannels();
  return useMutation({
    // code: a fresh 2FA code for the step-up a new channel's keys need (admins with 2FA on).
    mutationFn: ({ code, ...body }: ChannelInput & { code?: string }) =>
      api.request<Channel>('POST', '/api/admin/channels', { body, headers: stepUpHeaders(code) }),
    onSuccess: invalidate,
  });
}

export function useUpdateChannel() {
  const invalidate = useInvalidateChannels();
  return useMutation({
    mutationFn: ({ id, body, code }: { id: number; body: ChannelInput; code?: string }) =>
      api.request<Channel>('PATCH', `/api/admin/channels/${id}`, { body, headers: stepUpHeaders(code) }),
    onSuccess: invalidate,
  });
}

export function useDeleteChannel() {
  const invalidate = useInvalidateChannels();
  return useMutation({
    mutationFn: (id: number) => api.del(`/api/admin/channels/${id}`),
    onSuccess: invalidate,
  });
}

/** Forces a channel's breaker (or one key's, with keyIndex) open / closed / half-open, or resets it. */
export function useBreakerAction() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, action, keyIndex }: { id: number; action: BreakerAction; keyIndex?: number }) =>
      api.post<ChannelHealth>(`/api/admin/channels/${id}/breaker`, keyIndex === undefined ? { action } : { action, key_index: keyIndex }),
    onSuccess: (health, { id }) => {
      qc.setQueryData(['channel-health', id], health);
      return qc.invalidateQueries({ queryKey: channelsKey });
    },
  });
}

export function useTestChannel() {
  const invalidate = useInvalidateChannels();
  return useMutation({
    mutationFn: ({ id, model }: { id: number; model?: string }) =>
      api.post<ChannelTestResult>(`/api/admin/channels/${id}/test`, model ? { model } : {}),
    onSettled: invalidate,
  });
}

export function useFetchUpstreamModels() {
  return useMutation({
    mutationFn: (id: number) => api.post<{ models: string[] }>(`/api/admin/channels/${id}/fetch-models`),
  });
}

/** Starts a background test of many channels; answers the job id to poll. */
export function useStartChannelTests() {
  return useMutation({
    mutationFn: (body: { ids?: number[]; status?: string }) =>
      api.post<{ id: string }>('/api/admin/channels/test', body),
  });
}

/** Polls a test job every second until every channel has an answer. */
export function useChannelTestJob(jobId: string | null) {
  const qc = useQueryClient();
  return useQuery({
    queryKey: ['channel-test-job', jobId],
    queryFn: async () => {
      const job = await api.get<ChannelTestJob>(`/api/admin/channels/test/${jobId}`);
      if (job.total > 0 && job.done >= job.total) void qc.invalidateQueries({ queryKey: channelsKey });
      return job;
    },
    enabled: !!jobId,
    refetchInterval: (q) => {
      const job = q.state.data;
      return job && job.done >= job.total ? false : 1000;
    },
  });
}
