import { fireEvent, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../../test/render';
import UsersPage from './UsersPage';

const base = { email: '', group: 'default', tier: 'default', status: 'enabled', quota: 0, used_quota: 0, request_count: 0, rpm: 0, tpm: 0, created_at: '2026-12-01T00:00:00Z' };
let users: Record<string, unknown>[];
let fetchMock: ReturnType<typeof vi.fn>;

beforeEach(() => {
  users = [
    { ...base, id: 1, username: 'root', role: 'root' },
    { ...base, id: 5, username: 'bob', role: 'user' },
  ];
  fetchMock = vi.fn(async (url: string, init?: RequestInit) => {
    const u = new URL(url, 'http://x');
    if (u.pathname === '/api/admin/users' && init?.method === 'POST') {
      const body = JSON.parse(String(init.body)) as { username: string; role: string; quota: number };
      if (body.username === 'bob') {
        return new Response(JSON.stringify({ error: { code: 'username_taken', message: 'This username is already taken.' } }), { status: 409 });
      }
      const created = { ...base, id: 9, username: body.username, role: body.role, quota: body.quota };
      users.push(created);
      return new Response(JSON.stringify(created), { status: 201 });
    }
    if (u.pathname === '/api/admin/users/5' && init?.method === 'DELETE') {
      users = users.filter((x) => x.id !== 5);
      return new Response(null, { status: 204 });
    }
    if (u.pathname === '/api/admin/users') return new Response(JSON.stringify({ items: users, total: users.length }), { status: 200 });
    return new Response(JSON.stringify({}), { status: 200 });
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

const calls = (method: string, path: string) =>
  fetchMock.mock.calls.filter(([url, init]) => new URL(url as string, 'http://x').pathname === path && (init as RequestInit | undefined)?.method === method);

describe('UsersPage', () => {
  it('creates a user with a starting balance in units', async () => {
    renderWithProviders(<UsersPage />);
    await screen.findByText('bob');
    fireEvent.click(screen.getByRole('button', { name: /Create user/ }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.change(within(dialog).getByLabelText('Username'), { target: { value: 'carol' } });
    fireEvent.change(within(dialog).getByLabelText('Password'), { target: { value: 'Granite-Lake-82' } });
    fireEvent.change(within(dialog).getByLabelText('Starting balance (optional)'), { target: { value: '2.5' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create user' }));
    expect(await screen.findByText('carol')).toBeInTheDocument();
    const [, init] = calls('POST', '/api/admin/users')[0];
    expect(JSON.parse(String((init as RequestInit).body))).toMatchObject({ username: 'carol', password: 'Granite-Lake-82', role: 'user', quota: 2_500_000 });
  });

  it('deletes a user after confirming, and offers no delete for root', async () => {
    renderWithProviders(<UsersPage />);
    await screen.findByText('bob');
    expect(screen.queryByRole('button', { name: 'Delete root' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Delete bob' }));
    fireEvent.click(await screen.findByRole('button', { name: 'Delete' }));
    await vi.waitFor(() => expect(calls('DELETE', '/api/admin/users/5')).toHaveLength(1));
    await vi.waitFor(() => expect(screen.queryByText('bob')).toBeNull());
  });
});
