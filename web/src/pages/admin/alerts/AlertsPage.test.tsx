import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../../test/render';
import AlertsPage from './AlertsPage';

const row = (id: number, over = {}) => ({
  id,
  event: 'channel.opened',
  event_key: 'channel:3',
  target: 'https://hooks.example.com/a',
  channel: 'webhook',
  status: 'sent',
  attempts: 1,
  error: '',
  subject: 'Channel main opened',
  created_at: '2026-12-02T06:00:00Z',
  ...over,
});

let fetchMock: ReturnType<typeof vi.fn>;
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });

beforeEach(() => {
  fetchMock = vi.fn(async (url: string) => {
    if (url.startsWith('/api/admin/alerts')) {
      const cursor = new URL(url, 'http://x').searchParams.get('cursor');
      return cursor
        ? json({ items: [row(1, { status: 'failed', error: 'HTTP 500', channel: 'email', target: 'ops@example.com' })], next_cursor: null })
        : json({ items: [row(2)], next_cursor: 2 });
    }
    return json({});
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

describe('AlertsPage', () => {
  it('lists sent alerts newest first and loads older ones by cursor', async () => {
    renderWithProviders(<AlertsPage />);
    expect(await screen.findByText('Channel opened')).toBeInTheDocument();
    expect(screen.getByText('Sent')).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: /load more/i }));
    expect(await screen.findByText('HTTP 500')).toBeInTheDocument();
    expect(screen.getByText('Failed')).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByRole('button', { name: /load more/i })).not.toBeInTheDocument());
    expect(fetchMock.mock.calls.some(([u]) => String(u).includes('cursor=2'))).toBe(true);
  });
});
