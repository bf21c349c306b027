import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { api } from '../api/http';
import { SessionProvider, useSession } from './SessionProvider';

function Probe() {
  const { status, user, isAdmin } = useSession();
  return <p data-testid="probe">{`${status}|${user?.username ?? ''}|${isAdmin}`}</p>;
}

function renderSession() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <SessionProvider>
        <Probe />
      </SessionProvider>
    </QueryClientProvider>,
  );
}

const root = { id: 1, username: 'root', role: 'root', group: 'default', status: 'enabled', quota: 0, used_quota: 0, request_count: 0, created_at: '' };

afterEach(() => {
  api.setSession(null);
  vi.unstubAllGlobals();
});

describe('SessionProvider', () => {
  it('restores the session from the refresh cookie on load', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string) =>
        url === '/api/auth/refresh'
          ? new Response(JSON.stringify({ token: 'jwt', user: root }), { status: 200 })
          : new Response(JSON.stringify(root), { status: 200 }),
      ),
    );
    renderSession();
    expect(await screen.findByText('authenticated|root|true')).toBeInTheDocument();
    expect(api.getToken()).toBe('jwt');
  });

  it('is anonymous when there is no valid cookie', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response(JSON.stringify({ error: { code: 'invalid_refresh', message: 'x' } }), { status: 401 })));
    renderSession();
    expect(await screen.findByText('anonymous||false')).toBeInTheDocument();
  });
});
