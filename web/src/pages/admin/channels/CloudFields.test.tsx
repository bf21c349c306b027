import { act, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Channel } from '../../../api/types';
import i18n from '../../../i18n';
import { renderWithProviders } from '../../../test/render';
import { ChannelFormDrawer } from './ChannelFormDrawer';

const bedrock: Channel = {
  id: 9, type: 'bedrock', name: 'br', base_url: 'https://bedrock-runtime.us-east-1.amazonaws.com', keys: ['AKID****cret'],
  key_strategy: 'random', models: ['claude'], model_mapping: {}, groups: ['default'], priority: 0, weight: 1, status: 'enabled',
  header_override: {}, body_override: {}, status_code_mapping: {}, test_model: '',
  timeouts: { connect_ms: 0, first_byte_ms: 0, idle_ms: 0, total_ms: 0 }, tag: '', created_at: '',
  config: { bedrock: { region: 'us-east-1' } },
};
const vertex: Channel = { ...bedrock, id: 10, type: 'vertex', name: 'vx', keys: ['{"ty****"}\n'], config: { vertex: { project: 'p-123456', region: 'global' } } };

let fetchMock: ReturnType<typeof vi.fn>;
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
let patchAnswer: () => Response;

beforeEach(() => {
  patchAnswer = () => json(bedrock);
  fetchMock = vi.fn(async (url: string, init?: RequestInit) => (init?.method === 'PATCH' ? patchAnswer() : json(url.startsWith('/api/admin/groups') ? [] : { items: [], total: 0 })));
  vi.stubGlobal('fetch', fetchMock);
});
afterEach(async () => {
  vi.unstubAllGlobals();
  await act(() => i18n.changeLanguage('en'));
});

const patches = () => fetchMock.mock.calls.filter(([, init]) => init?.method === 'PATCH').map(([, init]) => JSON.parse(String(init.body)));

describe('cloud channel fields', () => {
  it('edits a Bedrock channel: key pair and region fields instead of the keys box; stored credentials kept', async () => {
    renderWithProviders(<ChannelFormDrawer open channel={bedrock} onClose={() => {}} />);
    expect(await screen.findByTestId('bedrock-access-key')).toBeInTheDocument();
    expect(screen.getByTestId('bedrock-secret-key')).toBeInTheDocument();
    expect(screen.queryByText('Keys')).toBeNull();
    fireEvent.change(screen.getByTestId('bedrock-region'), { target: { value: 'eu-west-3' } });
    fireEvent.click(screen.getByTestId('channel-submit'));
    await waitFor(() => expect(patches()).toHaveLength(1));
    expect(patches()[0].config).toEqual({ bedrock: { region: 'eu-west-3', model_ids: {} } });
    expect(patches()[0].keys).toBeUndefined();
  });

  it('shows the server\'s error naming the settings field', async () => {
    patchAnswer = () =>
      json({ error: { code: 'validation_failed', message: 'config.bedrock.region: required, e.g. us-east-1', field: 'config.bedrock.region' } }, 400);
    renderWithProviders(<ChannelFormDrawer open channel={bedrock} onClose={() => {}} />);
    fireEvent.click(await screen.findByTestId('channel-submit'));
    await waitFor(() => expect(patches()).toHaveLength(1), { timeout: 10000 });
    await screen.findByText('config.bedrock.region: required, e.g. us-east-1', {}, { timeout: 10000 });
  });

  it('shows the Vertex key file, project and region, in Chinese too', async () => {
    await act(() => i18n.changeLanguage('zh-CN'));
    renderWithProviders(<ChannelFormDrawer open channel={vertex} onClose={() => {}} />);
    expect(await screen.findByText('服务账号密钥（JSON）')).toBeInTheDocument();
    expect(screen.getByText('项目 ID')).toBeInTheDocument();
    expect(screen.getByText('上传密钥文件')).toBeInTheDocument();
    fireEvent.change(screen.getByTestId('vertex-sa-json'), { target: { value: '{"type":"service_account"}' } });
    fireEvent.click(screen.getByTestId('channel-submit'));
    await waitFor(() => expect(patches()).toHaveLength(1));
    expect(patches()[0].keys).toEqual(['{"type":"service_account"}']);
    expect(patches()[0].config).toEqual({ vertex: { project: 'p-123456', region: 'global' } });
  });
});
