import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../test/render';
import { payRedirect, TopupCard } from './TopupCard';
import WalletReturnPage from './WalletReturnPage';

const options = {
  providers: [
    { name: 'epay', methods: ['alipay', 'wxpay'], currency: 'CNY', rate: '7.3', min_amount: '1', max_amount: '1000' },
    { name: 'stripe', methods: [], currency: 'USD', rate: '1', min_amount: '5', max_amount: '500' },
  ],
  presets: ['10', '100'],
  bonus: [{ min_amount: '100', percent: '10' }],
};

let fetchMock: ReturnType<typeof vi.fn>;
let orderStatus: string[];
let selfQuota: number;
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });

beforeEach(() => {
  orderStatus = ['pending', 'pending', 'paid'];
  selfQuota = 0;
  fetchMock = vi.fn(async (url: string, init?: RequestInit) => {
    if (url === '/api/status') return json({ display_currency: 'USD', display_rate: '7.3' });
    if (url === '/api/user/topup/options') return json(options);
    if (url === '/api/user/topup' && init?.method === 'POST') {
      return json({ order_no: 'T1', pay_url: 'https://pay.example/submit.php?x=1', amount: '10', currency: 'CNY', quota: 1_369_863, status: 'pending' }, 201);
    }
    if (url === '/api/user/topups/T1') {
      const status = orderStatus.length > 1 ? orderStatus.shift()! : orderStatus[0];
      if (status === 'paid') selfQuota = 1_369_863;
      return json({ order_no: 'T1', provider: 'epay', amount: '10.00', currency: 'CNY', quota: 1_369_863, status });
    }
    if (url === '/api/user/self') return json({ id: 2, username: 'u', role: 'user', quota: selfQuota, used_quota: 0 });
    return json({ error: { code: 'route_not_found', message: 'no' } }, 404);
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe('TopupCard', () => {
  it('shows what a preset buys, bonus included, and sends the order to the provider', async () => {
    const go = vi.spyOn(payRedirect, 'go').mockImplementation(() => undefined);
    renderWithProviders(<TopupCard />);
    fireEvent.click(await screen.findByTestId('preset-10'));
    expect(await screen.findByTestId('topup-quote-total')).toHaveTextContent('$1.369863');

    fireEvent.click(screen.getByTestId('preset-100'));
    await waitFor(() => expect(screen.getByTestId('topup-quote-total')).toHaveTextContent('$15.068493'));
    expect(screen.getByText(/incl\. \$1\.369863 bonus \(10 %\)/)).toBeInTheDocument();

    fireEvent.click(screen.getByText('WeChat Pay'));
    fireEvent.click(screen.getByTestId('topup-pay'));
    await waitFor(() => expect(go).toHaveBeenCalledWith('https://pay.example/submit.php?x=1'));
    const post = fetchMock.mock.calls.find(([url]) => url === '/api/user/topup')!;
    expect(JSON.parse(post[1].body)).toEqual({ provider: 'epay', method: 'wxpay', amount: '100' });
  });

  it('refuses an amount outside the provider limits before sending', async () => {
    renderWithProviders(<TopupCard />);
    const amount = await screen.findByLabelText('Amount (CNY)');
    fireEvent.change(amount, { target: { value: '0.5' } });
    expect(await screen.findByText('At least 1')).toBeInTheDocument();
    fireEvent.change(amount, { target: { value: '10.123' } });
    expect(await screen.findByText('At most 2 decimals')).toBeInTheDocument();
    expect(screen.getByTestId('topup-pay')).toBeDisabled();
    // Switching to Stripe applies its own currency and limits.
    fireEvent.click(screen.getByText('Card (Stripe)'));
    fireEvent.change(await screen.findByLabelText('Amount (USD)'), { target: { value: '600' } });
    expect(await screen.findByText('At most 500')).toBeInTheDocument();
    expect(fetchMock.mock.calls.some(([url]) => url === '/api/user/topup')).toBe(false);
  });
});

describe('WalletReturnPage', () => {
  it('polls the order until it is paid, then shows the new balance', async () => {
    renderWithProviders(<WalletReturnPage />, { route: '/console/wallet/return?order=T1' });
    expect(await screen.findByTestId('return-title')).toHaveTextContent(/Checking|Waiting/);
    await waitFor(() => expect(screen.getByTestId('return-title')).toHaveTextContent('Paid'), { timeout: 8000 });
    await waitFor(() => expect(screen.getByTestId('return-balance')).toHaveTextContent('$1.369863'));
  }, 15_000);

  it('reads the order Epay appends to the return URL', async () => {
    orderStatus = ['expired'];
    renderWithProviders(<WalletReturnPage />, { route: '/console/wallet/return?out_trade_no=T1&trade_status=TRADE_SUCCESS' });
    await waitFor(() => expect(screen.getByTestId('return-title')).toHaveTextContent('The order expired'));
  });
});
