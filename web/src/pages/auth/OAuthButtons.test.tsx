import { screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../test/render';
import { LoginPage } from './LoginPage';

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });

function stubStatus(providers: unknown[]) {
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string) =>
      url === '/api/status'
        ? json({ version: 't', registration_open: true, store: 'sqlite', cache: 'memory', site_name: 'T', notice: '', oauth_providers: providers })
        : json({}),
    ),
  );
}

afterEach(() => vi.unstubAllGlobals());

describe('LoginPage provider sign-in', () => {
  beforeEach(() =>
    stubStatus([
      { slug: 'github', name: 'GitHub', type: 'github' },
      { slug: 'corp', name: 'Corp SSO', type: 'oidc' },
    ]),
  );

  it('shows one button per enabled provider, each navigating to its start URL', async () => {
    renderWithProviders(<LoginPage />, { route: '/login' });
    const gh = await screen.findByTestId('oauth-github');
    expect(gh).toHaveAttribute('href', '/api/auth/oauth/github/start');
    expect(gh).toHaveTextContent('Continue with GitHub');
    expect(screen.getByTestId('oauth-corp')).toHaveAttribute('href', '/api/auth/oauth/corp/start');
    expect(screen.queryByTestId('oauth-error')).not.toBeInTheDocument();
  });

  it('explains the error a provider sign-in came back with', async () => {
    renderWithProviders(<LoginPage />, { route: '/login?error=oauth_email_exists' });
    expect(await screen.findByTestId('oauth-error')).toHaveTextContent(/already exists.*link the provider in your profile/);
  });

  it('names an unknown error code rather than showing nothing', async () => {
    renderWithProviders(<LoginPage />, { route: '/login?error=something_new' });
    expect(await screen.findByTestId('oauth-error')).toHaveTextContent('(something_new)');
  });
});

describe('LoginPage without providers', () => {
  beforeEach(() => stubStatus([]));

  it('shows no provider section', async () => {
    renderWithProviders(<LoginPage />, { route: '/login' });
    await screen.findByRole('button', { name: /sign in/i });
    expect(screen.queryByText('or')).not.toBeInTheDocument();
    expect(screen.queryByTestId('oauth-github')).not.toBeInTheDocument();
  });
});
