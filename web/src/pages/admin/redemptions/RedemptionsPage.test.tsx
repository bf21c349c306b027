import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../../test/render';
import RedemptionsPage from './RedemptionsPage';

let fetchMock: ReturnType<typeof vi.fn>;
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });
const row = { id: 7, batch: 'B1', batch_name: 'launch', hint: 'TG-AB…YZ', quota: 2_000_000, status: 'unused', used_by: 0, expires_at: null };

beforeEach(() => {
  fetchMock = vi.fn(async (url: string, init?: RequestInit) => {
    if (url === '/api/admin/redemptions' && init?.method === 'POST') {
      const body = JSON.parse(init.body as string);
      return json({ batch: 'B2', name: body.name, count: 2, quota: body.quota, expires_at: null, codes: ['TG-AAAA', 'TG-BBBB'] }, 201);
    }
    if (url.startsWith('/api/admin/redemptions/batches')) return json({ items: [{ batch: 'B1', name: 'launch', quota: 2_000_000, count: 1, unused: 1, used: 0, expired: 0, disabled: 0 }], total: 1 });
    if (url.startsWith('/api/admin/redemptions/7') && init?.method === 'PATCH') return json({ ...row, status: 'disabled' });
    if (url.startsWith('/api/admin/redemptions')) return json({ items: [row], total: 1 });
    if (url === '/api/status') return json({ display_currency: 'USD', display_rate: '7.3' });
    return json({ error: { code: 'route_not_found', message: 'no' } }, 404);
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

describe('RedemptionsPage', () => {
  it('lists codes with their value and disables one', async () => {
    renderWithProviders(<RedemptionsPage />);
    expect(await screen.findByText('TG-AB…YZ')).toBeInTheDocument();
    expect(screen.getByText('$2.00')).toBeInTheDocument();
    fireEvent.click(screen.getByRole('switch', { name: 'Disable' }));
    await waitFor(() => expect(fetchMock.mock.calls.some(([url, init]) => url === '/api/admin/redemptions/7' && init?.method === 'PATCH')).toBe(true));
    const patch = fetchMock.mock.calls.find(([, init]) => init?.method === 'PATCH')!;
    expect(JSON.parse(patch[1].body)).toEqual({ status: 'disabled' });
  });

  it('creates a batch in units and shows its codes once, ready to copy', async () => {
    const writeText = vi.fn(async () => undefined);
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText } });
    renderWithProviders(<RedemptionsPage />);
    fireEvent.click(await screen.findByTestId('create-batch'));
    fireEvent.change(await screen.findByLabelText('Batch name'), { target: { value: ' spring ' } });
    fireEvent.change(screen.getByLabelText('Number of codes'), { target: { value: '2' } });
    fireEvent.change(screen.getByLabelText('Value of each code'), { target: { value: '0.5' } });
    fireEvent.click(screen.getByTestId('batch-submit'));
    const codes = await screen.findByTestId('batch-codes');
    expect(codes).toHaveValue('TG-AAAA\nTG-BBBB');
    const post = fetchMock.mock.calls.find(([, init]) => init?.method === 'POST')!;
    expect(JSON.parse(post[1].body)).toEqual({ name: 'spring', count: 2, quota: 500_000 });
    fireEvent.click(screen.getByTestId('batch-copy-all'));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith('TG-AAAA\nTG-BBBB'));
  });
});
