import { screen, within } from '@testing-library/react';
import { Button } from 'antd';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../test/render';
import { ResponsiveTable } from './ResponsiveTable';

type Row = { id: number; name: string; cost: number; status: string };
const rows: Row[] = [{ id: 1, name: 'alpha', cost: 1.5, status: 'enabled' }];
const columns = [
  { title: 'Name', dataIndex: 'name', key: 'name' },
  { title: 'Cost', dataIndex: 'cost', key: 'cost', render: (v: number) => `$${v.toFixed(2)}` },
  { title: 'Status', dataIndex: 'status', key: 'status', responsive: ['md' as const] },
  { title: 'Actions', key: 'actions', render: (_: unknown, r: Row) => <Button>Edit {r.name}</Button> },
];

/** antd reads breakpoints through matchMedia: `wide` makes every min-width query match. */
function screenWidth(wide: boolean) {
  vi.spyOn(window, 'matchMedia').mockImplementation(
    (query: string) =>
      ({ matches: wide, media: query, onchange: null, addListener: vi.fn(), removeListener: vi.fn(), addEventListener: vi.fn(), removeEventListener: vi.fn(), dispatchEvent: vi.fn() }) as unknown as MediaQueryList,
  );
}

afterEach(() => vi.restoreAllMocks());

describe('ResponsiveTable', () => {
  it('shows every fact and action of a row as a card on a phone', async () => {
    screenWidth(false);
    renderWithProviders(<ResponsiveTable<Row> cardTitle="Things" rowKey="id" columns={columns} dataSource={rows} />);
    const card = await screen.findByTestId('phone-card');
    expect(within(card).getByText('Name').nextSibling).toHaveTextContent('alpha');
    expect(within(card).getByText('Cost').nextSibling).toHaveTextContent('$1.50');
    // A column a wide table hides on small screens is still a fact on the card.
    expect(within(card).getByText('Status').nextSibling).toHaveTextContent('enabled');
    expect(within(card).getByRole('button', { name: 'Edit alpha' })).toBeInTheDocument();
    expect(screen.getByRole('columnheader', { name: 'Things' })).toBeInTheDocument();
  });

  it('takes a page’s own card', async () => {
    screenWidth(false);
    renderWithProviders(
      <ResponsiveTable<Row> cardTitle="Things" rowKey="id" columns={columns} dataSource={rows} card={(r) => <b data-testid="own">{r.name}</b>} />,
    );
    expect(await screen.findByTestId('own')).toHaveTextContent('alpha');
    expect(screen.queryByTestId('phone-card')).toBeNull();
  });

  it('is a plain table on a wide screen', async () => {
    screenWidth(true);
    renderWithProviders(<ResponsiveTable<Row> cardTitle="Things" rowKey="id" columns={columns} dataSource={rows} />);
    expect(await screen.findByRole('columnheader', { name: 'Cost' })).toBeInTheDocument();
    expect(screen.queryByTestId('phone-card')).toBeNull();
    expect(screen.getByText('$1.50')).toBeInTheDocument();
  });
});
