import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../../test/render';
import { PricingImportModal } from './PricingImportModal';

let fetchMock: ReturnType<typeof vi.fn>;
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });
const file = { model_ratio: { 'new-model': 0.75 }, completion_ratio: { 'new-model': 4 } };

beforeEach(() => {
  fetchMock = vi.fn(async (url: string, init?: RequestInit) => {
    if (url.startsWith('/api/admin/pricing/import')) {
      const dry = url.includes('dry_run=1');
      return json({
        format: 'new-api',
        mode: 'merge',
        imported: 1,
        added: 1,
        changed: 0,
        rows: 3,
        dry_run: dry,
        ...(dry ? { prices: [{ model: 'new-model', input: '1.5', output: '6', cache_read: '0', cache_write: '0', per_call: '0' }] } : {}),
        echo: init?.body,
      });
    }
    if (url.startsWith('/api/status')) return json({ display_currency: 'USD' });
    return json([]);
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

describe('PricingImportModal', () => {
  it('previews a new-api file with a dry run, then saves it on confirm', async () => {
    const onClose = vi.fn();
    renderWithProviders(<PricingImportModal open onClose={onClose} />);
    const input = document.querySelector('input[type="file"]') as HTMLInputElement;
    fireEvent.change(input, { target: { files: [new File([JSON.stringify(file)], 'ratios.json', { type: 'application/json' })] } });
    expect(await screen.findByTestId('price-import-added')).toHaveTextContent('1');
    expect(screen.getByTestId('price-import-changed')).toHaveTextContent('0');
    expect(screen.getByText('new-api ratios')).toBeInTheDocument();
    expect(screen.getByText('$1.50')).toBeInTheDocument();
    const dry = fetchMock.mock.calls.find(([u]) => String(u).startsWith('/api/admin/pricing/import'))!;
    expect(String(dry[0])).toContain('mode=merge');
    expect(JSON.parse(String(dry[1].body))).toEqual(file);

    fireEvent.click(screen.getByRole('button', { name: 'Save these prices' }));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    const saves = fetchMock.mock.calls.filter(([u]) => String(u).startsWith('/api/admin/pricing/import') && !String(u).includes('dry_run'));
    expect(saves).toHaveLength(1);
  });

  it('says so when the file is not JSON, without calling the server', async () => {
    renderWithProviders(<PricingImportModal open onClose={() => undefined} />);
    const input = document.querySelector('input[type="file"]') as HTMLInputElement;
    fireEvent.change(input, { target: { files: [new File(['model_ratio: 1'], 'bad.json')] } });
    expect(await screen.findByTestId('price-import-error')).toHaveTextContent('Not a JSON file');
    expect(fetchMock.mock.calls.some(([u]) => String(u).startsWith('/api/admin/pricing/import'))).toBe(false);
  });
});
