import { fireEvent, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../test/render';
import { LogsView } from './LogsView';

function log(id: number) {
  return {
    id,
    request_id: `req-${id}`,
    client_request_id: '',
    created_at: '2026-11-29T10:00:00Z',
    user_id: 2,
    username: 'ann',
    token_id: 1,
    token_name: 'ci',
    channel_id: 1,
    channel_name: 'main',
    model: `model-${id}`,
    upstream_model: `model-${id}`,
    stream: false,
    prompt_tokens: 10,
    completion_tokens: 20,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    cost: 50,
    price: { input: '1', output: '2', cache_read: '0', cache_write: '0', per_call: '0' },
    group_ratio: '1',
    status: 'success',
    http_status: 200,
    error_class: '',
    error: '',
    elapsed_ms: 120,
    first_byte_ms: 80,
    client_ip: '127.0.0.1',
    attempts: [{ channel_id: 1, key_index: 0, class: '', latency_ms: 110 }],
  };
}

/** A log as GET /api/logs gives it to its owner: no channel, attempts or upstream model. */
function userLog(id: number) {
  const full: Record<string, unknown> = log(id);
  for (const internal of ['channel_id', 'channel_name', 'upstream_model', 'attempts']) delete full[internal];
  return {
    ...full,
    client_request_id: 'my-id',
    status: 'error',
    http_status: 502,
    error_class: 'server',
    error_code: 'upstream_server',
    error: 'The upstream had an internal error.',
  };
}

let fetchMock: ReturnType<typeof vi.fn>;

beforeEach(() => {
  fetchMock = vi.fn(async (url: string) => {
    const u = new URL(url, 'http://x');
    if (u.pathname === '/api/logs/totals' || u.pathname === '/api/admin/logs/totals') {
      return new Response(JSON.stringify({ requests: 3, cost: 150, prompt_tokens: 30, completion_tokens: 60 }), { status: 200 });
    }
    if (u.pathname === '/api/logs/export') {
      return new Response('time,request_id\n', {
        status: 200,
        headers: { 'Content-Type': 'text/csv', 'Content-Disposition': 'attachment; filename="tollgate-logs-x.csv"' },
      });
    }
    if (u.pathname === '/api/admin/logs') {
      const test = { ...log(7), is_test: true, username: 'root', token_id: 0, token_name: '', status: 'error', error_class: 'server' };
      return new Response(JSON.stringify({ items: [test], next_cursor: null }), { status: 200 });
    }
    if (u.pathname === '/api/logs') {
      if (u.searchParams.get('client_request_id') === 'my-id') {
        return new Response(JSON.stringify({ items: [userLog(9)], next_cursor: null }), { status: 200 });
      }
      const page = u.searchParams.get('cursor') === '5' ? { items: [log(4)], next_cursor: null } : { items: [log(6), log(5)], next_cursor: 5 };
      return new Response(JSON.stringify(page), { status: 200 });
    }
    return new Response(JSON.stringify({ items: [], total: 0 }), { status: 200 });
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

describe('LogsView', () => {
  it('loads more with the cursor and shows cost and latency', async () => {
    renderWithProviders(<LogsView />);
    expect(await screen.findByText('model-6')).toBeInTheDocument();
    expect(screen.getAllByText('$0.000050')).toHaveLength(2);
    expect(screen.getAllByText('120 ms').length).toBeGreaterThan(0);

    fireEvent.click(screen.getByRole('button', { name: 'Load more' }));
    expect(await screen.findByText('model-4')).toBeInTheDocument();
    expect(await screen.findByText('No more records')).toBeInTheDocument();
    const cursors = fetchMock.mock.calls
      .map(([url]) => new URL(url as string, 'http://x'))
      .filter((u) => u.pathname === '/api/logs')
      .map((u) => u.searchParams.get('cursor'));
    expect(cursors).toEqual([null, '5']);
  });

  it('opens the detail drawer with the price breakdown', async () => {
    renderWithProviders(<LogsView />);
    fireEvent.click(await screen.findByText('model-6'));
    const detail = await screen.findByTestId('log-detail');
    expect(within(detail).getByText('req-6')).toBeInTheDocument();
    expect(within(detail).getByText('80 ms')).toBeInTheDocument();
    expect(screen.getByText('$1.00 / 1M tokens')).toBeInTheDocument();
    expect(screen.getByText('$2.00 / 1M tokens')).toBeInTheDocument();
    expect(screen.getByTestId('log-detail-cost')).toHaveTextContent('$0.000050');
  });

  it('searches by the caller\'s request id and shows a user log without internal fields', async () => {
    renderWithProviders(<LogsView />);
    await screen.findByText('model-6');
    const search = screen.getByPlaceholderText('Your X-Request-Id');
    fireEvent.change(search, { target: { value: ' my-id ' } });
    fireEvent.keyDown(search, { key: 'Enter', code: 'Enter', keyCode: 13 });
    fireEvent.click(await screen.findByText('model-9'));
    const detail = await screen.findByTestId('log-detail');
    expect(within(detail).getByText('req-9')).toBeInTheDocument();
    expect(within(detail).getByTestId('log-client-request-id')).toHaveTextContent('my-id');
    expect(within(detail).getByText('The upstream had an internal error.')).toBeInTheDocument();
    expect(within(detail).getByText('upstream_server')).toBeInTheDocument();
    expect(within(detail).queryByText('Upstream model')).toBeNull();
    expect(within(detail).queryByText('Channel')).toBeNull();
    expect(screen.queryByText('Upstream attempts')).toBeNull();
    const sent = fetchMock.mock.calls
      .map(([url]) => new URL(url as string, 'http://x'))
      .filter((u) => u.pathname === '/api/logs')
      .map((u) => u.searchParams.get('client_request_id'));
    expect(sent).toContain('my-id');
  });

  it('shows the totals of the filter and exports the same filter as CSV', async () => {
    const created = vi.fn(() => 'blob:x');
    vi.stubGlobal('URL', Object.assign(URL, { createObjectURL: created, revokeObjectURL: vi.fn() }));
    renderWithProviders(<LogsView />);
    expect(await screen.findByText('3 requests · 30 in / 60 out tokens · $0.000150')).toBeInTheDocument();
    const search = screen.getByPlaceholderText('Model');
    fireEvent.change(search, { target: { value: 'gpt-4o' } });
    fireEvent.keyDown(search, { key: 'Enter', code: 'Enter', keyCode: 13 });
    fireEvent.click(screen.getByRole('button', { name: /Export CSV/ }));
    await vi.waitFor(() => expect(created).toHaveBeenCalled());
    const urls = fetchMock.mock.calls.map(([url]) => new URL(url as string, 'http://x'));
    const exported = urls.find((u) => u.pathname === '/api/logs/export');
    expect(exported?.searchParams.get('model')).toBe('gpt-4o');
    expect(urls.some((u) => u.pathname === '/api/logs/totals' && u.searchParams.get('model') === 'gpt-4o')).toBe(true);
  });

  it('shows a channel test as such, never as user traffic, with its error class in words', async () => {
    renderWithProviders(<LogsView admin />);
    expect(await screen.findByText('Channel test')).toBeInTheDocument();
    expect(screen.getByText('Upstream server error')).toBeInTheDocument();
    expect(screen.queryByText('server')).toBeNull();
  });
});
