import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { App as AntdApp } from 'antd';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import '../../i18n';
import { BalanceAlertCard } from './BalanceAlertCard';

vi.mock('../../auth/SessionProvider', () => ({
  useSession: () => ({ status: 'authenticated', user: { id: 2, username: 'u', email: 'u@example.com', balance_alert: 2_500_000 }, isAdmin: false }),
}));

let fetchMock: ReturnType<typeof vi.fn>;
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });

beforeEach(() => {
  fetchMock = vi.fn(async (url: string, init?: RequestInit) => {
    if (url === '/api/user/self' && init?.method === 'PATCH') return json({ id: 2, ...JSON.parse(String(init.body)) });
    if (url.startsWith('/api/status')) return json({ display_currency: 'USD' });
    return json({});
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

describe('BalanceAlertCard', () => {
  it('shows the stored threshold and saves a new one in units', async () => {
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    render(
      <QueryClientProvider client={client}>
        <AntdApp>
          <BalanceAlertCard />
        </AntdApp>
      </QueryClientProvider>,
    );
    expect(screen.getByTestId('balance-alert-current')).toHaveTextContent('On: below $2.50');
    const input = screen.getByLabelText('Alert below');
    await waitFor(() => expect(input).toHaveValue('2.5'));
    fireEvent.change(input, { target: { value: '1.25' } });
    fireEvent.click(screen.getByRole('button', { name: /save/i }));
    await waitFor(() => expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'PATCH')).toBe(true));
    const patch = fetchMock.mock.calls.find(([, init]) => init?.method === 'PATCH')!;
    expect(JSON.parse(patch[1].body)).toEqual({ balance_alert: 1_250_000 });
  });
});
