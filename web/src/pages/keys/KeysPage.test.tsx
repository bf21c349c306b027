import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../test/render';
import type { Token } from '../../api/types';
import { KeyGroup } from '../../components/KeyMarks';
import KeysPage from './KeysPage';

const created = {
  id: 9,
  user_id: 1,
  name: 'ci',
  key: 'sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL',
  status: 'enabled',
  admin_disabled: false,
  group_revoked: false,
  remain_quota: 0,
  unlimited: true,
  used_quota: 0,
  expires_at: null,
  models: [],
  allowed_ips: [],
  group: '',
  rpm: 0,
  concurrency: 0,
  created_at: '2026-11-29T00:00:00Z',
  last_used_at: null,
};

let fetchMock: ReturnType<typeof vi.fn>;
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });

beforeEach(() => {
  const items: unknown[] = [];
  fetchMock = vi.fn(async (url: string, init?: RequestInit) => {
    if (url.startsWith('/api/tokens') && init?.method === 'POST') {
      items.push({ ...created, key: 'sk-abcd****IJKL' });
      return json(created, 201);
    }
    if (url.startsWith('/api/tokens')) return json({ items, total: items.length });
    return json([]);
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

describe('KeysPage', () => {
  it('shows the empty state, then the new key once in clear', async () => {
    renderWithProviders(<KeysPage />);
    expect(await screen.findByText('No API keys yet')).toBeInTheDocument();

    fireEvent.click(screen.getByTestId('create-key'));
    fireEvent.click(await screen.findByTestId('key-submit'));
    expect(await screen.findByText('Required')).toBeInTheDocument();

    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'ci' } });
    fireEvent.click(screen.getByTestId('key-submit'));

    const secret = await screen.findByTestId('key-secret');
    expect(secret).toHaveTextContent(created.key);
    const post = fetchMock.mock.calls.find(([, init]) => init?.method === 'POST');
    expect(JSON.parse(post![1].body)).toMatchObject({ name: 'ci', unlimited: true });

    fireEvent.click(await screen.findByRole('button', { name: 'Done' }));
    const table = screen.getByRole('table');
    await waitFor(() => expect(within(table).getByText('sk-abcd****IJKL')).toBeInTheDocument());
    expect(within(table).queryByText(created.key)).not.toBeInTheDocument();
  });

  it('marks a key an admin disabled and locks its switch for the owner', async () => {
    const locked = { ...created, id: 1, name: 'locked', key: 'sk-lock****AAAA', status: 'disabled', admin_disabled: true };
    const revoked = { ...created, id: 2, name: 'vip', key: 'sk-vipk****BBBB', group: 'vip', group_revoked: true };
    fetchMock.mockImplementation(async () => json({ items: [locked, revoked], total: 2 }));
    renderWithProviders(<KeysPage />);
    const table = await screen.findByRole('table');
    await waitFor(() => expect(within(table).getByText('sk-lock****AAAA')).toBeInTheDocument());
    expect(within(table).getByTestId('key-admin-disabled')).toHaveTextContent('Disabled by an administrator');
    const switches = within(table).getAllByRole('switch');
    expect(switches[0]).toBeDisabled();
    expect(switches[1]).not.toBeDisabled();
  });

  it('marks a key whose group its owner may no longer use', () => {
    // The group column is responsive (hidden at jsdom's width), so the cell is rendered on its own.
    renderWithProviders(<KeyGroup token={{ ...created, group: 'vip', group_revoked: true } as Token} />);
    expect(screen.getByTestId('key-group-revoked')).toHaveTextContent('Group no longer available');
    expect(screen.getByText('vip')).toBeInTheDocument();
  });
});
