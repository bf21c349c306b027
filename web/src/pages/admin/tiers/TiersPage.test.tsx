import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Tier } from '../../../api/types';
import { renderWithProviders } from '../../../test/render';
import TiersPage from './TiersPage';

let tiers: Tier[];
let fetchMock: ReturnType<typeof vi.fn>;
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });

beforeEach(() => {
  tiers = [{ name: 'vip', description: 'VIP', ratio: '0.8', users: 3 }];
  fetchMock = vi.fn(async (url: string, init?: RequestInit) => {
    if (url === '/api/admin/tiers' && init?.method === 'POST') {
      const body = JSON.parse(String(init.body));
      tiers = [...tiers, { ...body, users: 0 }];
      return json(tiers.at(-1), 201);
    }
    if (url === '/api/admin/tiers/vip' && init?.method === 'DELETE')
      return json({ error: { code: 'tier_in_use', message: 'Tier vip still has users.' } }, 409);
    if (url === '/api/admin/tiers/vip' && init?.method === 'PATCH') return json({ ...tiers[0], ...JSON.parse(String(init.body)) });
    if (url === '/api/admin/tiers') return json(tiers);
    return json([]);
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

describe('TiersPage', () => {
  it('lists tiers with their user counts and creates one', async () => {
    renderWithProviders(<TiersPage />);
    const row = (await screen.findByText('vip')).closest('tr')!;
    expect(within(row).getByText('×0.8')).toBeInTheDocument();
    expect(within(row).getByText('3')).toBeInTheDocument();

    fireEvent.click(screen.getByTestId('create-tier'));
    fireEvent.change(await screen.findByLabelText('Name'), { target: { value: 'gold' } });
    fireEvent.change(screen.getByLabelText('Price ratio'), { target: { value: 'abc' } });
    fireEvent.click(screen.getByTestId('tier-submit'));
    expect(await screen.findByText('Enter a number such as 0.15')).toBeInTheDocument();
    fireEvent.change(screen.getByLabelText('Price ratio'), { target: { value: '0.9' } });
    fireEvent.click(screen.getByTestId('tier-submit'));
    await waitFor(() => expect(screen.getByText('gold')).toBeInTheDocument());
    const post = fetchMock.mock.calls.find(([, init]) => init?.method === 'POST');
    expect(JSON.parse(String(post![1].body))).toEqual({ name: 'gold', ratio: '0.9', description: '' });
  });

  it('edits the ratio without renaming', async () => {
    renderWithProviders(<TiersPage />);
    const row = (await screen.findByText('vip')).closest('tr')!;
    fireEvent.click(within(row).getByRole('button', { name: 'Edit' }));
    expect(await screen.findByLabelText('Name')).toBeDisabled();
    fireEvent.change(screen.getByLabelText('Price ratio'), { target: { value: '0.75' } });
    fireEvent.click(screen.getByTestId('tier-submit'));
    await waitFor(() => expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'PATCH')).toBe(true));
    const patch = fetchMock.mock.calls.find(([, init]) => init?.method === 'PATCH');
    expect(JSON.parse(String(patch![1].body))).toEqual({ ratio: '0.75', description: 'VIP' });
  });

  it('says why a tier in use cannot be deleted', async () => {
    renderWithProviders(<TiersPage />);
    const row = (await screen.findByText('vip')).closest('tr')!;
    fireEvent.click(within(row).getByRole('button', { name: 'Delete' }));
    fireEvent.click((await screen.findAllByRole('button', { name: 'Delete' })).at(-1)!);
    expect(await screen.findByText('Tier vip still has users.')).toBeInTheDocument();
  });
});
