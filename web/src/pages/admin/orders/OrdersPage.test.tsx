import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../../test/render';
import OrdersPage from './OrdersPage';

const order = {
  order_no: 'T20261201000000abc',
  user_id: 5,
  username: 'alice',
  provider: 'epay',
  method: 'alipay',
  amount: '10.00',
  currency: 'CNY',
  quota: 1_369_863,
  bonus: 0,
  status: 'paid',
  trade_no: 'EP123',
  event_id: 'epay:EP123',
  created_at: '2026-12-01T00:00:00Z',
  paid_at: '2026-12-01T00:01:00Z',
  expires_at: '2026-12-01T02:00:00Z',
  updated_at: '2026-12-01T00:01:00Z',
};

let fetchMock: ReturnType<typeof vi.fn>;
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });

beforeEach(() => {
  fetchMock = vi.fn(async (url: string) => {
    if (url.startsWith(`/api/admin/topups/${order.order_no}`)) return json(order);
    if (url.startsWith('/api/admin/topups')) return json({ items: [order], total: 1 });
    if (url === '/api/status') return json({ display_currency: 'CNY', display_rate: '7.3' });
    return json({ error: { code: 'route_not_found', message: 'no' } }, 404);
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

describe('OrdersPage', () => {
  it('filters by user and opens an order in the drawer, money in the display currency', async () => {
    renderWithProviders(<OrdersPage />);
    const link = await screen.findByRole('button', { name: order.order_no });
    // The amount paid and the credit (1,369,863 units at 7.3) both read ¥10.00.
    expect(await screen.findAllByText('¥10.00')).toHaveLength(2);
    // Who paid: the username, with the id beside it.
    expect(screen.getByTestId('order-payer')).toHaveTextContent('alice #5');
    fireEvent.change(screen.getByLabelText('User ID'), { target: { value: '5' } });
    await waitFor(() => expect(fetchMock.mock.calls.some(([url]) => String(url).includes('user_id=5'))).toBe(true));
    fireEvent.click(link);
    const detail = await screen.findByTestId('order-detail');
    expect(within(detail).getByText('EP123')).toBeInTheDocument();
    expect(within(detail).getByTestId('order-payer')).toHaveTextContent('alice #5');
    expect(within(detail).getByTestId('order-status')).toHaveTextContent('Paid');
  });
});
