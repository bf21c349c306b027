import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../../test/render';
import { OAuthProvidersCard } from './OAuthProvidersCard';

let fetchMock: ReturnType<typeof vi.fn>;
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });

beforeEach(() => {
  fetchMock = vi.fn(async (_url: string, init?: RequestInit) => json(JSON.parse(String(init?.body ?? '{}'))));
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

describe('OAuthProvidersCard', () => {
  it('adds an OIDC provider and saves only the oauth setting, keeping the masked GitHub secret', async () => {
    const stored = {
      github: { enabled: true, client_id: 'gh-id', client_secret: 'gh****et', auth_url: '', token_url: '', api_url: '' },
      oidc: [],
    };
    renderWithProviders(<OAuthProvidersCard value={stored} />);
    fireEvent.click(await screen.findByTestId('oauth-add-provider'));
    fireEvent.change(await screen.findByLabelText('Slug'), { target: { value: 'corp' } });
    fireEvent.change(screen.getByLabelText('Button name'), { target: { value: 'Corp SSO' } });
    fireEvent.change(screen.getByLabelText('Issuer URL'), { target: { value: 'https://sso.example.com/realms/main' } });
    const ids = screen.getAllByLabelText('Client ID');
    fireEvent.change(ids[ids.length - 1], { target: { value: 'tollgate' } });
    const secrets = screen.getAllByLabelText('Client secret');
    fireEvent.change(secrets[secrets.length - 1], { target: { value: 'oidc-secret' } });
    expect(await screen.findByText(/\/api\/auth\/oauth\/corp\/callback/)).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: /save providers/i }));
    await waitFor(() => expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'PUT')).toBe(true));
    const put = fetchMock.mock.calls.find(([, init]) => init?.method === 'PUT')!;
    expect(put[0]).toBe('/api/admin/settings');
    expect(JSON.parse(put[1].body)).toEqual({
      oauth: {
        github: stored.github,
        oidc: [
          {
            enabled: true,
            slug: 'corp',
            name: 'Corp SSO',
            issuer: 'https://sso.example.com/realms/main',
            client_id: 'tollgate',
            client_secret: 'oidc-secret',
            scopes: [],
          },
        ],
      },
    });
  }, 60_000);

  it('refuses a slug with capitals before sending', async () => {
    renderWithProviders(<OAuthProvidersCard value={undefined} />);
    fireEvent.click(await screen.findByTestId('oauth-add-provider'));
    fireEvent.change(await screen.findByLabelText('Slug'), { target: { value: 'Corp' } });
    fireEvent.click(screen.getByRole('button', { name: /save providers/i }));
    expect(await screen.findAllByText(/Lower-case letters/)).not.toHaveLength(0);
    expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'PUT')).toBe(false);
  }, 60_000);
});
