import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Channel, ChannelHealth } from '../../../api/types';
import { renderWithProviders } from '../../../test/render';
import { ChannelHealthDrawer } from './ChannelHealthDrawer';

const channel = { id: 7, name: 'main', keys: ['sk-a****', 'sk-b****'] } as Channel;

const closed: ChannelHealth = {
  state: 'closed',
  forced: false,
  keys: [
    { index: 0, state: 'closed' },
    { index: 1, state: 'closed' },
  ],
  metrics: {},
};

let health: ChannelHealth;
let fetchMock: ReturnType<typeof vi.fn>;
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });

beforeEach(() => {
  health = closed;
  fetchMock = vi.fn(async (url: string, init?: RequestInit) => {
    if (url === '/api/admin/channels/7/breaker' && init?.method === 'POST') {
      const { action, key_index } = JSON.parse(String(init.body));
      if (key_index === undefined) health = { ...health, state: action === 'open' ? 'open' : 'closed', forced: action === 'open' };
      else
        health = {
          ...health,
          keys: health.keys.map((k) => (k.index === key_index ? { ...k, state: action === 'open' ? 'open' : 'closed', forced: action === 'open' } : k)),
        };
      return json(health);
    }
    if (url === '/api/admin/channels/7/health') return json(health);
    return json({ items: [], total: 0 });
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

const breakerCalls = () =>
  fetchMock.mock.calls.filter(([url, init]) => url === '/api/admin/channels/7/breaker' && init?.method === 'POST').map(([, init]) => JSON.parse(String(init.body)));

describe('ChannelHealthDrawer', () => {
  it('forces the channel open only after confirming, and shows it forced', async () => {
    renderWithProviders(<ChannelHealthDrawer channel={channel} onClose={() => undefined} />);
    fireEvent.click(await screen.findByTestId('breaker-open-channel'));
    expect(await screen.findByText('Force this channel open?')).toBeInTheDocument();
    expect(breakerCalls()).toEqual([]);
    fireEvent.click(screen.getAllByRole('button', { name: 'Force open' }).at(-1)!);
    await waitFor(() => expect(breakerCalls()).toEqual([{ action: 'open' }]));
    expect(await screen.findByTestId('health-forced')).toHaveTextContent('Forced');
    expect(screen.getAllByTestId('health-state')[0]).toHaveTextContent('Tripped');
  });

  it('resets one key without asking', async () => {
    renderWithProviders(<ChannelHealthDrawer channel={channel} onClose={() => undefined} />);
    fireEvent.click(await screen.findByTestId('breaker-reset-key-1'));
    await waitFor(() => expect(breakerCalls()).toEqual([{ action: 'reset', key_index: 1 }]));
    fireEvent.click(screen.getByTestId('breaker-half_open-channel'));
    await waitFor(() => expect(breakerCalls()).toContainEqual({ action: 'half_open' }));
  });
});
