import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LogicalGroup } from '../../../api/types';
import { renderWithProviders } from '../../../test/render';
import GroupsPage from './GroupsPage';

const group: LogicalGroup = {
  name: 'gpt-shared',
  display_name: 'GPT shared',
  description: '',
  status: 'enabled',
  ratio: '1',
  selectable: true,
  models: ['gpt-4o'],
  access: { all: true, tiers: [], users: [] },
  sticky: { levels: [], ttl_s: {} },
  failover: { consecutive_failures: 0, cooldown_s: 0, max_attempts: 0, deadline_s: 0 },
  return_to_primary_s: 0,
  routes: [
    { name: 'codex2api', priority: 10, weight: 1, channels: [2] },
    { name: 'asxs', priority: 20, weight: 1, channels: [1] },
  ],
};

const defaults = {
  sticky: { levels: ['conversation', 'session'], ttl_s: { conversation: 3600, session: 1800 } },
  failover: { consecutive_failures: 3, cooldown_s: 30, max_attempts: 4, deadline_s: 120 },
};

let fetchMock: ReturnType<typeof vi.fn>;
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });

beforeEach(() => {
  fetchMock = vi.fn(async (url: string, init?: RequestInit) => {
    if (url.startsWith('/api/admin/logical-groups/defaults')) return json(defaults);
    if (url === '/api/admin/logical-groups' && init?.method === 'POST') return json(JSON.parse(String(init.body)), 201);
    if (url.startsWith('/api/admin/logical-groups/') && init?.method === 'PATCH') return json({ ...group, ...JSON.parse(String(init.body)) });
    if (url.startsWith('/api/admin/logical-groups')) return json([group]);
    if (url.startsWith('/api/admin/channels'))
      return json({ items: [{ id: 1, name: 'asxs-1' }, { id: 2, name: 'codex-1' }], total: 2 });
    return json([]);
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

const routeNames = () => screen.getAllByTestId('route-name').map((input) => (input as HTMLInputElement).value);

function patchBody() {
  const call = fetchMock.mock.calls.find(([, init]) => init?.method === 'PATCH');
  expect(call).toBeDefined();
  expect(call![0]).toBe('/api/admin/logical-groups/gpt-shared');
  return JSON.parse(String(call![1].body));
}

async function openEditor() {
  renderWithProviders(<GroupsPage />);
  expect(await screen.findByText('Logical groups')).toBeInTheDocument();
  const row = (await screen.findByText('gpt-shared')).closest('tr')!;
  expect(within(row).getByTestId('group-routes-count')).toHaveTextContent('2');
  fireEvent.click(within(row).getByRole('button', { name: 'Edit' }));
  await waitFor(() => expect(routeNames()).toEqual(['asxs', 'codex2api']));
}

describe('GroupsPage', () => {
  it('shows the routes highest priority first and the site defaults as hints', async () => {
    await openEditor();
    expect(screen.getAllByTestId('route-priority').map((tag) => tag.textContent)).toEqual(['20', '10']);
    expect(await screen.findByText('Default: 3')).toBeInTheDocument();
    expect(screen.getByText('Default: 120')).toBeInTheDocument();
    expect(screen.getByText('None checked uses the default: Conversation, Session')).toBeInTheDocument();
  });

  it('moves a route with the keyboard buttons and saves priorities from the new order', async () => {
    await openEditor();
    fireEvent.click(screen.getAllByRole('button', { name: 'Move down' })[0]);
    expect(routeNames()).toEqual(['codex2api', 'asxs']);
    fireEvent.click(screen.getByTestId('group-submit'));
    await waitFor(() => expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'PATCH')).toBe(true));
    const body = patchBody();
    expect(body.name).toBeUndefined();
    expect(body.routes).toEqual([
      { name: 'codex2api', priority: 20, weight: 1, channels: [2] },
      { name: 'asxs', priority: 10, weight: 1, channels: [1] },
    ]);
    expect(body.failover).toEqual({ consecutive_failures: 0, cooldown_s: 0, max_attempts: 0, deadline_s: 0 });
  });

  it('reorders routes by dragging the handle onto another route', async () => {
    await openEditor();
    const data = new Map<string, string>();
    const dataTransfer = {
      setData: (k: string, v: string) => data.set(k, v),
      getData: (k: string) => data.get(k) ?? '',
      effectAllowed: '',
      dropEffect: '',
    };
    const handles = screen.getAllByTestId('route-drag');
    const rows = screen.getAllByTestId('route-row');
    fireEvent.dragStart(handles[1], { dataTransfer });
    fireEvent.dragOver(rows[0], { dataTransfer });
    fireEvent.drop(rows[0], { dataTransfer });
    fireEvent.dragEnd(handles[1], { dataTransfer });
    expect(routeNames()).toEqual(['codex2api', 'asxs']);
    fireEvent.click(screen.getByTestId('group-submit'));
    await waitFor(() => expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'PATCH')).toBe(true));
    expect(patchBody().routes.map((r: { name: string; priority: number }) => [r.name, r.priority])).toEqual([
      ['codex2api', 20],
      ['asxs', 10],
    ]);
  });

  it('refuses two routes with the same name', async () => {
    await openEditor();
    fireEvent.change(screen.getAllByTestId('route-name')[1], { target: { value: 'asxs' } });
    fireEvent.click(screen.getByTestId('group-submit'));
    expect(await screen.findAllByText('Two routes share this name')).not.toHaveLength(0);
    expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'PATCH')).toBe(false);
  });

  it('shows a server error under the route field it names', async () => {
    await openEditor();
    fetchMock.mockImplementationOnce(async () =>
      json({ error: { code: 'validation_failed', message: 'channel 9 does not exist', field: 'routes[1].channels' } }, 400),
    );
    fireEvent.click(screen.getByTestId('group-submit'));
    const error = await screen.findByText('channel 9 does not exist');
    expect(error.closest('[data-testid="route-row"]')).toBe(screen.getAllByTestId('route-row')[1]);
  });

  it('creates a group with no routes (it then routes over the channels that list it)', async () => {
    renderWithProviders(<GroupsPage />);
    fireEvent.click(await screen.findByTestId('create-group'));
    expect(await screen.findByTestId('no-routes')).toBeInTheDocument();
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'legacy' } });
    fireEvent.click(screen.getByTestId('group-submit'));
    await waitFor(() => expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'POST')).toBe(true));
    const post = fetchMock.mock.calls.find(([, init]) => init?.method === 'POST');
    expect(JSON.parse(String(post![1].body))).toMatchObject({ name: 'legacy', routes: [], access: { all: true }, selectable: true });
  });
});
