import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SimulateResult } from '../../api/routing';
import { renderWithProviders } from '../../test/render';
import SimulatorPage from './SimulatorPage';

vi.mock('../../auth/SessionProvider', () => ({
  useSession: () => ({ status: 'authenticated', user: { id: 2, username: 'u' }, isAdmin: false }),
}));

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });
let fetchMock: ReturnType<typeof vi.fn>;

const inputs = (success: number, latency: number, price: number) => ({
  success, latency_ms: latency, price, samples: 40, source: 'node', active: 0, latency_score: 0, success_score: 0, cost_score: 0,
});
const result: SimulateResult = {
  strategy: 'cost',
  groups: ['default'],
  preferences: { strategy: 'cost', min_success: 0.9 },
  decision_us: 7,
  candidates: [
    { channel_id: 1, name: 'A', group: 'default', route: '', score: 0.61, share: 0.7, inputs: inputs(0.98, 450, 5), reason: 'top-2, rank 1' },
    { channel_id: 2, name: 'B', group: 'default', route: '', score: 0.44, share: 0.3, inputs: inputs(0.95, 800, 12), reason: 'top-2, rank 2' },
    { channel_id: 3, name: 'C', group: 'default', score: 0, share: 0, inputs: inputs(0.7, 200, 2), excluded: true, pref: 'min_success', reason: 'success 0.700 < min_success 0.9' },
  ],
};

beforeEach(() => {
  fetchMock = vi.fn(async (url: string, init?: RequestInit) => {
    if (url === '/api/routing/simulate' && init?.method === 'POST') {
      const body = JSON.parse(String(init.body));
      if (body.group === 'vip') return json({ error: { code: 'forbidden', message: 'You are not allowed to do this.' } }, 403);
      return json(result);
    }
    return json({});
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

describe('SimulatorPage', () => {
  it('sends the model and preferences and shows the ranking with the excluded channel and its reason', async () => {
    renderWithProviders(<SimulatorPage />);
    expect(screen.queryByLabelText('User ID')).toBeNull(); // users simulate for themselves only
    fireEvent.change(screen.getByLabelText('Model'), { target: { value: 'gpt-4o-mini' } });
    fireEvent.change(screen.getByLabelText('Min success rate (0–1)'), { target: { value: '0.9' } });
    fireEvent.click(screen.getByTestId('simulate'));
    const table = await screen.findByTestId('ranking');
    const rows = within(table).getAllByTestId('ranking-channel').map((c) => c.textContent);
    expect(rows).toEqual(['A #1', 'B #2', 'C #3']);
    expect(within(table).getByText('Excluded')).toBeInTheDocument();
    expect(within(table).getByText('success 0.700 < min_success 0.9')).toBeInTheDocument();
    expect(within(table).getByText('30.0%')).toBeInTheDocument();
    expect(screen.getByText('Strategy Cost over default, decided in 7 µs')).toBeInTheDocument();
    const post = fetchMock.mock.calls.find(([, init]) => init?.method === 'POST');
    expect(JSON.parse(String(post![1].body))).toEqual({ model: 'gpt-4o-mini', preferences: { min_success: 0.9 } });
  });

  it('shows the server refusal for a group the user may not use', async () => {
    renderWithProviders(<SimulatorPage />);
    fireEvent.change(screen.getByLabelText('Model'), { target: { value: 'gpt-4o-mini' } });
    fireEvent.change(screen.getByLabelText('Group'), { target: { value: 'vip' } });
    fireEvent.click(screen.getByTestId('simulate'));
    await waitFor(() => expect(screen.getByText('You are not allowed to do this.')).toBeInTheDocument());
    expect(screen.queryByTestId('ranking')).toBeNull();
  });
});
