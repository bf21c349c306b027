import { useQuery } from '@tanstack/react-query';
import { useSiteStatus } from './auth';

/** The base URL clients call: the site's public base URL from /api/status, else this page's origin. */
export function useBaseUrl(): string {
  const status = useSiteStatus();
  const configured = status.data?.public_base_url?.trim();
  return (configured || window.location.origin).replace(/\/+$/, '');
}

/** Calls the gateway's own API (not the console API) with one of the user's keys. */
export function relayFetch(path: string, key: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${key}`);
  return fetch(path, { ...init, headers });
}

/** The models a key may call (GET /v1/models with the key); only runs with a key in clear. */
export function useKeyModels(key: string | null | undefined) {
  return useQuery({
    queryKey: ['relay-models', key],
    enabled: !!key && key.startsWith('sk-'),
    staleTime: 60_000,
    queryFn: async () => {
      const res = await relayFetch('/v1/models', key!);
      if (!res.ok) throw new Error(`${res.status}`);
      const body = (await res.json()) as { data?: { id: string }[] };
      return (body.data ?? []).map((m) => m.id).sort();
    },
  });
}
