import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RoutingConfigRow } from '../../../api/routing';
import { renderWithProviders } from '../../../test/render';
import RoutingConfigPage from './RoutingConfigPage';

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });
let rows: RoutingConfigRow[];
let fetchMock: ReturnType<typeof vi.fn>;
const defaults = { strategy: 'priority', weights: { latency: 0.3, success: 0.4, cost: 0.3 }, min_samples: 20 };

beforeEach(() => {
  rows = [{ group: 'default', model: 'gpt-4o-mini', tuning: { strategy: 'performance', weights: { latency: 0, success: 0, cost: 0 } },
    updated_at: '2026-12-03T10:00:00Z', effective: { ...defaults, strategy: 'performance' } }];
  fetchMock = vi.fn(async (url: string, init?: RequestInit) => {
    if (url.startsWith('/api/admin/routing/models/') && init?.method === 'PUT') {
      const body = JSON.parse(String(init.body));
      if (body.min_share > 0.3) return json({ error: { code: 'validation_failed', message: 'Field "min_share" is invalid.', field: 'min_share' } }, 400);
      const [, , , , , group, model] = url.split('/');
      rows = [...rows, { group: decodeURIComponent(group), model: decodeURIComponent(model), tuning: body, updated_at: '', effective: { ...defaults, ...body } }];
      return json(rows.at(-1));
    }
    if (url === '/api/admin/routing/models') return json({ items: rows, defaults, global: defaults, strategies: [] });
    return json({});
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

describe('RoutingConfigPage', () => {
  it('lists rows with their effective strategy and saves a new row', async () => {
    renderWithProviders(<RoutingConfigPage />);
    const row = (await screen.findByText('gpt-4o-mini')).closest('tr')!;
    expect(within(row).getByText('Performance')).toBeInTheDocument();
    fireEvent.click(screen.getByTestId('add-routing-row'));
    fireEvent.change(await screen.findByLabelText('Model'), { target: { value: 'claude-sonnet-4-5' } });
    fireEvent.change(screen.getByLabelText('Min samples'), { target: { value: '5' } });
    fireEvent.change(screen.getByLabelText('Min share'), { target: { value: '0.5' } });
    fireEvent.click(screen.getByTestId('routing-submit'));
    expect(await screen.findByText('Field "min_share" is invalid.')).toBeInTheDocument();
    fireEvent.change(screen.getByLabelText('Min share'), { target: { value: '0.1' } });
    fireEvent.click(screen.getByTestId('routing-submit'));
    await waitFor(() => expect(screen.getByText('claude-sonnet-4-5')).toBeInTheDocument());
    const puts = fetchMock.mock.calls.filter(([, init]) => init?.method === 'PUT');
    expect(puts.at(-1)![0]).toBe('/api/admin/routing/models/*/claude-sonnet-4-5');
    expect(JSON.parse(String(puts.at(-1)![1].body))).toEqual({ weights: { latency: 0, success: 0, cost: 0 }, min_samples: 5, min_share: 0.1 });
  });
});
