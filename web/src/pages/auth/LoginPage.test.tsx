import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { api } from '../../api/http';
import { renderWithProviders } from '../../test/render';
import { LoginPage } from './LoginPage';

const session = {
  token: 'jwt-1',
  expires_at: '2030-01-01T00:00:00Z',
  user: { id: 2, username: 'alice', role: 'user', group: 'default', status: 'enabled', quota: 0, used_quota: 0, request_count: 0, created_at: '' },
};

let fetchMock: ReturnType<typeof vi.fn>;
const calls = (path: string) => fetchMock.mock.calls.filter(([url]) => url === path);
const json = (body: unknown, status: number) => new Response(JSON.stringify(body), { status });

beforeEach(() => {
  fetchMock = vi.fn(async (url: string, init: RequestInit) => {
    if (url === '/api/auth/login') {
      return json({ error: { code: 'totp_required', message: 'Enter the code' }, ticket: 'tkt-123' }, 401);
    }
    if (url === '/api/auth/login/totp') {
      const body = JSON.parse(String(init.body)) as { ticket: string; totp: string };
      if (body.totp === '123456') return json(session, 200);
      return json({ error: { code: 'totp_invalid', message: 'The two-factor code is wrong' } }, 401);
    }
    return json({ error: { code: 'route_not_found', message: 'no' } }, 404);
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => {
  vi.unstubAllGlobals();
  api.setSession(null);
});

async function signIn() {
  renderWithProviders(<LoginPage />, { route: '/login' });
  fireEvent.change(screen.getByLabelText('Username'), { target: { value: 'alice' } });
  fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'correct-horse-1' } });
  fireEvent.click(screen.getByRole('button', { name: /sign in/i }));
  return screen.findByLabelText('Code');
}

describe('LoginPage second step', () => {
  it('asks for the code after totp_required and completes with the ticket', async () => {
    const code = await signIn();
    // The password step's 401 is not shown as an error: it is the next step.
    expect(screen.queryByTestId('login-error')).not.toBeInTheDocument();
    expect(calls('/api/auth/login')).toHaveLength(1);

    fireEvent.change(code, { target: { value: '000000' } });
    fireEvent.click(screen.getByRole('button', { name: /verify/i }));
    expect(await screen.findByText('The two-factor code is wrong')).toBeInTheDocument();
    expect(api.getToken()).toBeNull();

    fireEvent.change(screen.getByLabelText('Code'), { target: { value: ' 123456 ' } });
    fireEvent.click(screen.getByRole('button', { name: /verify/i }));
    await waitFor(() => expect(api.getToken()).toBe('jwt-1'));
    const sent = calls('/api/auth/login/totp').map(([, init]) => JSON.parse(String((init as RequestInit).body)));
    expect(sent).toEqual([
      { ticket: 'tkt-123', totp: '000000' },
      { ticket: 'tkt-123', totp: '123456' },
    ]);
    // The password is never sent again.
    expect(calls('/api/auth/login')).toHaveLength(1);
  });

  it('goes back to the password form when the ticket has expired', async () => {
    fetchMock.mockImplementation(async (url: string) =>
      url === '/api/auth/login'
        ? json({ error: { code: 'totp_required', message: 'Enter the code' }, ticket: 'tkt-old' }, 401)
        : json({ error: { code: 'totp_ticket_invalid', message: 'This sign-in step has expired' } }, 401),
    );
    const code = await signIn();
    fireEvent.change(code, { target: { value: '123456' } });
    fireEvent.click(screen.getByRole('button', { name: /verify/i }));
    expect(await screen.findByText('This sign-in step has expired')).toBeInTheDocument();
    expect(screen.getByLabelText('Password')).toBeInTheDocument();
  });
});
