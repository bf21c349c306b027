import { screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../../test/render';
import BusinessPage from './BusinessPage';

// The numbers are what this test checks, not the charts' drawing.
vi.mock('../../../components/Chart', () => ({ SeriesChart: () => <div data-testid="chart" />, DonutChart: () => <div data-testid="chart" /> }));

const figures = { success_rate: 0.98, p50_ms: 120, p95_ms: 900, first_byte_p50_ms: 80, prompt_tokens: 100000, completion_tokens: 100000 };

let fetchMock: ReturnType<typeof vi.fn>;
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });

beforeEach(() => {
  fetchMock = vi.fn(async (url: string) => {
    if (url.startsWith('/api/admin/stats/channels')) {
      return json({
        items: [
          { channel_id: 3, name: 'cheap-line', requests: 100, revenue: 75000, upstream_cost: 50000, profit: 25000, ...figures },
          { channel_id: 4, name: 'lossy', requests: 10, revenue: 1000, upstream_cost: 3000, profit: -2000, ...figures },
        ],
      });
    }
    if (url.startsWith('/api/admin/stats/models')) return json({ items: [{ model: 'gpt-4o-mini', requests: 110, revenue: 76000, upstream_cost: 53000, profit: 23000, ...figures }] });
    if (url.startsWith('/api/admin/stats/days')) return json({ items: [{ date: '2026-12-02', requests: 110, revenue: 76000, upstream_cost: 53000, profit: 23000, ...figures }] });
    if (url.startsWith('/api/admin/stats/users')) return json({ items: [{ user_id: 2, username: 'alice', requests: 110, revenue: 76000, upstream_cost: 53000, profit: 23000, ...figures }] });
    if (url.startsWith('/api/status')) return json({ display_currency: 'USD' });
    return json({});
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

describe('BusinessPage', () => {
  it('shows totals and each channel’s revenue, upstream cost and profit for the last 30 days', async () => {
    renderWithProviders(<BusinessPage />);
    expect(await screen.findByTestId('biz-revenue-3')).toHaveTextContent('$0.075');
    expect(screen.getByTestId('biz-cost-3')).toHaveTextContent('$0.05');
    expect(screen.getByTestId('biz-profit-3')).toHaveTextContent('$0.025');
    expect(screen.getByTestId('biz-profit-4')).toHaveTextContent('-$0.002');
    await waitFor(() => expect(within(screen.getByTestId('biz-total-revenue')).getByText('$0.076')).toBeInTheDocument());
    expect(within(screen.getByTestId('biz-total-profit')).getByText('$0.023')).toBeInTheDocument();

    const call = fetchMock.mock.calls.map(([u]) => String(u)).find((u) => u.startsWith('/api/admin/stats/channels'))!;
    const params = new URL(call, 'http://x').searchParams;
    const days = (Date.parse(params.get('to')!) - Date.parse(params.get('from')!)) / 86_400_000;
    expect(days).toBeCloseTo(30, 0);
    expect(fetchMock.mock.calls.some(([u]) => String(u).startsWith('/api/admin/stats/users') && String(u).includes('limit=10'))).toBe(true);
  });
});
