import { describe, expect, it, vi } from 'vitest';
import { ApiClient, ApiError, buildQuery } from './client';

function json(status: number, body: unknown): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
}

const session = (token: string) => ({ token, user: { id: 1, username: 'ann', role: 'user' } }) as never;

describe('ApiClient', () => {
  it('sends the Bearer token and the UI language', async () => {
    const fetch = vi.fn(async (_url: RequestInfo | URL, _init?: RequestInit) => json(200, { ok: true }));
    const client = new ApiClient({ fetch, getLanguage: () => 'zh-CN' });
    client.setSession(session('jwt-1'));
    await client.get('/api/user/self', { page: 2, q: '', skip: undefined });
    const [url, init] = fetch.mock.calls[0];
    expect(url).toBe('/api/user/self?page=2');
    const headers = init?.headers as Record<string, string>;
    expect(headers.Authorization).toBe('Bearer jwt-1');
    expect(headers['Accept-Language']).toBe('zh-CN');
  });

  it('refreshes once on 401 and retries with the new token', async () => {
    const calls: string[] = [];
    const fetch = vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
      const auth = (init?.headers as Record<string, string>).Authorization ?? '';
      calls.push(`${init?.method} ${String(url)} ${auth}`);
      if (url === '/api/auth/refresh') return json(200, session('fresh'));
      return auth === 'Bearer fresh' ? json(200, { items: [], total: 0 }) : json(401, { error: { code: 'token_expired', message: 'expired' } });
    });
    const client = new ApiClient({ fetch });
    client.setSession(session('stale'));
    const seen: (string | null)[] = [];
    client.onSession((s) => seen.push(s?.token ?? null));

    await expect(client.get('/api/tokens')).resolves.toEqual({ items: [], total: 0 });
    expect(calls).toEqual([
      'GET /api/tokens Bearer stale',
      'POST /api/auth/refresh Bearer stale',
      'GET /api/tokens Bearer fresh',
    ]);
    expect(client.getToken()).toBe('fresh');
    expect(seen).toEqual(['fresh']);
  });

  it('shares one refresh between concurrent 401s', async () => {
    let refreshes = 0;
    const fetch = vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
      if (url === '/api/auth/refresh') {
        refreshes++;
        await new Promise((r) => setTimeout(r, 5));
        return json(200, session('fresh'));
      }
      const auth = (init?.headers as Record<string, string>).Authorization;
      return auth === 'Bearer fresh' ? json(200, { ok: 1 }) : json(401, {});
    });
    const client = new ApiClient({ fetch });
    client.setSession(session('stale'));
    await Promise.all([client.get('/a'), client.get('/b'), client.get('/c')]);
    expect(refreshes).toBe(1);
  });

  it('retries the refresh once when another tab renewed the session a moment earlier', async () => {
    let refreshes = 0;
    const fetch = vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
      if (url === '/api/auth/refresh') {
        refreshes++;
        return refreshes === 1
          ? json(401, { error: { code: 'refresh_rotated', message: 'renewed in another tab' } })
          : json(200, session('fresh'));
      }
      const auth = (init?.headers as Record<string, string>).Authorization;
      return auth === 'Bearer fresh' ? json(200, { ok: 1 }) : json(401, {});
    });
    const client = new ApiClient({ fetch });
    client.setSession(session('stale'));
    await expect(client.get('/a')).resolves.toEqual({ ok: 1 });
    expect(refreshes).toBe(2);
    expect(client.getToken()).toBe('fresh');
  });

  it('signs out when the refresh fails and surfaces the original 401 message', async () => {
    const fetch = vi.fn(async (url: RequestInfo | URL) =>
      url === '/api/auth/refresh'
        ? json(401, { error: { code: 'invalid_refresh', message: 'session over' } })
        : json(401, { error: { code: 'unauthorized', message: 'Sign in again' } }),
    );
    const client = new ApiClient({ fetch });
    client.setSession(session('stale'));
    const seen: (string | null)[] = [];
    client.onSession((s) => seen.push(s?.token ?? null));

    const err = await client.get('/api/user/self').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(401);
    expect((err as ApiError).message).toBe('Sign in again');
    expect(client.getToken()).toBeNull();
    expect(seen).toEqual([null]);
    expect(fetch).toHaveBeenCalledTimes(2);
  });

  it('does not refresh for login failures', async () => {
    const fetch = vi.fn(async () => json(401, { error: { code: 'invalid_credentials', message: 'Wrong password' } }));
    const client = new ApiClient({ fetch });
    await expect(client.post('/api/auth/login', { username: 'a', password: 'b' }, { retryOn401: false })).rejects.toMatchObject({
      code: 'invalid_credentials',
      message: 'Wrong password',
    });
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  it('passes the field of a validation error and falls back to a translated message', async () => {
    const fetch = vi
      .fn()
      .mockResolvedValueOnce(json(400, { error: { code: 'validation_failed', message: 'Name is too long', field: 'name' } }))
      .mockResolvedValueOnce(new Response('oops', { status: 502 }))
      .mockRejectedValueOnce(new TypeError('Failed to fetch'));
    const client = new ApiClient({ fetch, translate: (key, vars) => `${key}:${JSON.stringify(vars ?? {})}` });
    await expect(client.post('/api/tokens', {})).rejects.toMatchObject({ field: 'name', message: 'Name is too long' });
    await expect(client.get('/x')).rejects.toMatchObject({ status: 502, message: 'errors.http:{"status":502}' });
    await expect(client.get('/y')).rejects.toMatchObject({ status: 0, code: 'network_error' });
  });

  it('answers undefined for 204', async () => {
    const client = new ApiClient({ fetch: vi.fn(async () => new Response(null, { status: 204 })) });
    await expect(client.del('/api/tokens/1')).resolves.toBeUndefined();
  });

  it('builds queries from defined values only', () => {
    expect(buildQuery({ a: 1, b: '', c: undefined, d: null, e: 'x y' })).toBe('?a=1&e=x+y');
    expect(buildQuery({})).toBe('');
  });
});
