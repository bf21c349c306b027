import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../test/render';
import { KeyFormDrawer } from './KeyFormDrawer';

let fetchMock: ReturnType<typeof vi.fn>;
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });

beforeEach(() => {
  fetchMock = vi.fn(async (url: string, init?: RequestInit) => {
    if (url.startsWith('/api/user/groups'))
      return json([
        { name: 'gpt-shared', display_name: 'GPT shared', ratio: '1', models: [] },
        { name: 'gpt-backup', ratio: '1.2', models: [] },
        { name: 'cheap', ratio: '0.5', models: [] },
      ]);
    if (url.startsWith('/api/tokens') && init?.method === 'POST') return json({ id: 1, ...JSON.parse(String(init.body)) }, 201);
    return json([]);
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

/** Opens an antd Select by its wrapper's test id and picks the option with `label`. */
async function pick(testId: string, label: string) {
  const combo = within(screen.getByTestId(testId)).getByRole('combobox');
  fireEvent.mouseDown(combo);
  await waitFor(() => expect(optionsOf(testId)).toContain(label));
  const list = document.getElementById(combo.getAttribute('aria-controls') ?? '')!;
  fireEvent.click(within(list.closest('.ant-select-dropdown') as HTMLElement).getByTitle(label));
}

/** The option titles of the dropdown that belongs to the select with `testId`. */
function optionsOf(testId: string): string[] {
  const combo = within(screen.getByTestId(testId)).getByRole('combobox');
  const list = document.getElementById(combo.getAttribute('aria-controls') ?? '');
  const popup = list?.closest('.ant-select-dropdown');
  return [...(popup?.querySelectorAll('.ant-select-item-option') ?? [])].map((el) => el.getAttribute('title') ?? '');
}

describe('key form: group and fallback groups', () => {
  it('offers the user\'s groups, never the key\'s own group as a fallback, and sends fallbacks in order', async () => {
    const onCreated = vi.fn();
    renderWithProviders(<KeyFormDrawer open token={null} onClose={() => undefined} onCreated={onCreated} />);
    fireEvent.change(await screen.findByLabelText('Name'), { target: { value: 'bot' } });
    await waitFor(() => expect(fetchMock.mock.calls.some(([url]) => String(url).startsWith('/api/user/groups'))).toBe(true));
    await pick('key-group', 'GPT shared (gpt-shared) ×1');

    fireEvent.mouseDown(within(screen.getByTestId('key-fallback-groups')).getByRole('combobox'));
    await waitFor(() => expect(optionsOf('key-fallback-groups')).toEqual(['gpt-backup ×1.2', 'cheap ×0.5']));
    const fallbackOption = (title: string) => {
      const combo = within(screen.getByTestId('key-fallback-groups')).getByRole('combobox');
      const popup = document.getElementById(combo.getAttribute('aria-controls') ?? '')!.closest('.ant-select-dropdown')!;
      return within(popup as HTMLElement).getByTitle(title);
    };
    fireEvent.click(fallbackOption('cheap ×0.5'));
    fireEvent.click(fallbackOption('gpt-backup ×1.2'));
    expect(within(screen.getByTestId('key-fallback-groups')).getByText('1. cheap ×0.5')).toBeInTheDocument();
    expect(within(screen.getByTestId('key-fallback-groups')).getByText('2. gpt-backup ×1.2')).toBeInTheDocument();

    fireEvent.click(screen.getByTestId('key-submit'));
    await waitFor(() => expect(onCreated).toHaveBeenCalled());
    const post = fetchMock.mock.calls.find(([, init]) => init?.method === 'POST');
    expect(JSON.parse(String(post![1].body))).toMatchObject({ group: 'gpt-shared', fallback_groups: ['cheap', 'gpt-backup'] });
  });
});
