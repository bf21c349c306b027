import { describe, expect, it } from 'vitest';
import type { Channel } from '../../../api/types';
import { baseUrlOptional, channelToForm, DEFAULT_CHANNEL_VALUES, formToChannel, type ChannelFormValues } from './channelForm';

const values = (over: Partial<ChannelFormValues>): ChannelFormValues => ({ ...DEFAULT_CHANNEL_VALUES, name: 'c', models: ['m'], ...over });

describe('cloud channel form', () => {
  it('sends the Vertex key file as the one key with project and region', () => {
    const sa = '{\n  "type": "service_account",\n  "client_email": "a@b"\n}';
    const body = formToChannel(
      values({ type: 'vertex', vertex_sa_json: `  ${sa}\n`, keys_text: 'ignored', config: { vertex: { project: ' p-1 ', region: 'us-central1' } } }),
    );
    expect(body.keys).toEqual([sa]);
    expect(body.config).toEqual({ vertex: { project: 'p-1', region: 'us-central1' } });
  });

  it('joins the Bedrock key pair and sends region and model ids', () => {
    const body = formToChannel(
      values({
        type: 'bedrock',
        bedrock_access_key: 'AKID',
        bedrock_secret_key: 'sec/ret',
        config: { bedrock: { region: 'us-east-1' } },
        bedrock_model_ids: [{ key: 'claude', value: 'anthropic.claude-v1:0' }],
      }),
    );
    expect(body.keys).toEqual(['AKID:sec/ret']);
    expect(body.config).toEqual({ bedrock: { region: 'us-east-1', model_ids: { claude: 'anthropic.claude-v1:0' } } });
  });

  it('sends Azure version and deployments, and only the chosen type\'s settings', () => {
    const body = formToChannel(
      values({
        type: 'azure',
        keys_text: 'az-key',
        config: { azure: { api_version: '2024-10-21' }, bedrock: { region: 'us-east-1' }, preset: 'deepseek' },
        azure_deployments: [{ key: 'gpt-4o', value: 'prod-4o' }],
      }),
    );
    expect(body.keys).toEqual(['az-key']);
    expect(body.config).toEqual({ azure: { api_version: '2024-10-21', deployments: { 'gpt-4o': 'prod-4o' } } });
    expect(formToChannel(values({ type: 'openai-compatible', keys_text: 'k', config: { preset: 'groq' } })).config).toEqual({ preset: 'groq' });
    expect(formToChannel(values({ type: 'openai', keys_text: 'k', config: { preset: 'groq' } })).config).toEqual({});
  });

  it('keeps stored credentials when editing with empty credential boxes', () => {
    const stored = {
      id: 3, type: 'bedrock', name: 'b', base_url: 'https://bedrock-runtime.us-east-1.amazonaws.com', keys: ['AKID****cret'],
      key_strategy: 'random', models: ['claude'], model_mapping: {}, groups: ['default'], priority: 0, weight: 1, status: 'enabled',
      header_override: {}, body_override: {}, status_code_mapping: {}, test_model: '', timeouts: { connect_ms: 0, first_byte_ms: 0, idle_ms: 0, total_ms: 0 },
      tag: '', created_at: '', config: { bedrock: { region: 'us-east-1', model_ids: { claude: 'x' } } },
    } as Channel;
    const form = channelToForm(stored);
    expect(form.config.bedrock?.region).toBe('us-east-1');
    expect(form.bedrock_model_ids).toEqual([{ key: 'claude', value: 'x' }]);
    const body = formToChannel(form, stored);
    expect(body.keys).toBeUndefined();
    expect(body.config).toEqual({ bedrock: { region: 'us-east-1', model_ids: { claude: 'x' } } });
  });

  it('lets the server fill the base URL for presets and cloud regions only', () => {
    expect(baseUrlOptional('vertex')).toBe(true);
    expect(baseUrlOptional('bedrock')).toBe(true);
    expect(baseUrlOptional('openai-compatible', 'deepseek')).toBe(true);
    expect(baseUrlOptional('openai-compatible')).toBe(false);
    expect(baseUrlOptional('azure')).toBe(false);
  });
});
