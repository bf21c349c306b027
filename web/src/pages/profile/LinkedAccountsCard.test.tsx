import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../test/render';
import { LinkedAccountsCard } from './LinkedAccountsCard';

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });

let fetchMock: ReturnType<typeof vi.fn>;
let identities: unknown[];

beforeEach(() => {
  identities = [{ id: 7, user_id: 2, provider: 'github', subject: '42', email: 'me@example.com', created_at: '2026-01-02T03:04:05Z' }];
  fetchMock = vi.fn(async (url: string, init?: RequestInit) => {
    if (url === '/api/status')
      return json({
        oauth_providers: [
          { slug: 'github', name: 'GitHub', type: 'github' },
          { slug: 'corp', name: 'Corp SSO', type: 'oidc' },
        ],
      });
    if (url === '/api/user/identities') return json({ identities, has_password: false });
    if (url === '/api/user/identities/7' && init?.method === 'DELETE') {
      identities = [];
      return new Response(null, { status: 204 });
    }
    if (url === '/api/user/oauth/corp/link/start' && init?.method === 'POST') return json({ url: 'https://idp.example/authorize?x=1' });
    return json({ error: { code: 'not_found', message: 'Not found' } }, 404);
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe('LinkedAccountsCard', () => {
  it('lists linked accounts, offers the others, and warns a passwordless user', async () => {
    renderWithProviders(<LinkedAccountsCard />, { route: '/console/profile' });
    expect(await screen.findByText('me@example.com', { exact: false })).toBeInTheDocument();
    expect(await screen.findByTestId('link-corp')).toHaveTextContent('Link Corp SSO');
    expect(screen.queryByTestId('link-github')).not.toBeInTheDocument();
    expect(screen.getByText(/has no password/)).toBeInTheDocument();
  });

  it('unlinks after confirmation', async () => {
    renderWithProviders(<LinkedAccountsCard />, { route: '/console/profile' });
    fireEvent.click(await screen.findByRole('button', { name: 'Unlink' }));
    fireEvent.click(await screen.findByRole('button', { name: 'OK' }));
    await waitFor(() => expect(fetchMock.mock.calls.some(([u, i]) => u === '/api/user/identities/7' && i?.method === 'DELETE')).toBe(true));
    expect(await screen.findByText('No provider linked yet.')).toBeInTheDocument();
  });

  it('starts a link and sends the browser to the provider', async () => {
    const assign = vi.fn();
    vi.stubGlobal('location', { ...window.location, assign });
    renderWithProviders(<LinkedAccountsCard />, { route: '/console/profile' });
    fireEvent.click(await screen.findByTestId('link-corp'));
    await waitFor(() => expect(assign).toHaveBeenCalledWith('https://idp.example/authorize?x=1'));
  });

  it('shows the error a link came back with', async () => {
    renderWithProviders(<LinkedAccountsCard />, { route: '/console/profile?oauth_error=oauth_identity_taken' });
    expect(await screen.findByText('This provider account is already linked to another user.')).toBeInTheDocument();
  });
});
