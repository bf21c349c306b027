import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../test/render';
import PricingPage from './PricingPage';

vi.mock('../../auth/SessionProvider', () => ({
  useSession: () => ({ status: 'authenticated', user: { id: 2, username: 'u', group: 'default', tier: 'vip' }, isAdmin: false }),
}));

let fetchMock: ReturnType<typeof vi.fn>;
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });
const price = (model: string, group: string, ratio: string, input: string) => ({
  model,
  input,
  output: '2',
  cache_read: '0',
  cache_write: '0',
  per_call: '0',
  group,
  group_ratio: ratio,
  tier: 'vip',
  tier_ratio: '0.8',
  ratio: String(Number(ratio) * 0.8),
});

beforeEach(() => {
  fetchMock = vi.fn(async (url: string) => {
    if (url.startsWith('/api/user/groups')) {
      return json([
        { name: 'default', ratio: '1' },
        { name: 'premium', ratio: '1.5' },
      ]);
    }
    if (url.startsWith('/api/pricing')) {
      const params = new URL(url, 'http://x').searchParams;
      const group = params.get('group') ?? 'default';
      const rows = [
        price('gpt-4o-mini', group, group === 'premium' ? '1.5' : '1', group === 'premium' ? '1.2' : '0.8'),
        price('claude-x', group, '1', '3'),
        { ...price('dall-e-3', group, '1', '0'), per_image: '0.04', per_image_by_size: { '1024x1792/hd': '0.12' }, per_audio_minute: undefined },
        { ...price('whisper-1', group, '1', '0'), per_audio_minute: '0.006' },
      ];
      return json(rows.filter((r) => r.model.includes(params.get('q') ?? '')));
    }
    if (url.startsWith('/api/status')) return json({ display_currency: 'USD' });
    return json({});
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

describe('PricingPage', () => {
  it('shows what the user pays in their tier and group, and asks the server for a search', async () => {
    renderWithProviders(<PricingPage />);
    expect(await screen.findByTestId('price-input-gpt-4o-mini')).toHaveTextContent('$0.80');
    expect(screen.getByTestId('pricing-ratios')).toHaveTextContent('vip ×0.8');
    expect(screen.getByTestId('pricing-ratios')).toHaveTextContent('default ×1');
    expect(screen.getByTestId('price-units-dall-e-3')).toHaveTextContent('/ image');
    expect(screen.getByTestId('price-units-dall-e-3')).toHaveTextContent('1024x1792/hd');
    expect(screen.getByTestId('price-units-whisper-1')).toHaveTextContent('/ minute');
    expect(screen.queryByTestId('price-units-gpt-4o-mini')).not.toBeInTheDocument();
    fireEvent.change(screen.getByPlaceholderText('Search models'), { target: { value: 'claude' } });
    await waitFor(() => expect(screen.queryByTestId('price-input-gpt-4o-mini')).not.toBeInTheDocument());
    expect(screen.getByTestId('price-input-claude-x')).toHaveTextContent('$3.00');
    expect(fetchMock.mock.calls.some(([u]) => String(u).includes('q=claude'))).toBe(true);
  });
});
