import { describe, expect, it } from 'vitest';
import type { Channel } from '../../../api/types';
import { channelToForm, DEFAULT_CHANNEL_VALUES, formToChannel, parseKeys, parseOverrideValue } from './channelForm';

const stored: Channel = {
  id: 7,
  type: 'openai',
  name: 'main',
  base_url: 'https://api.example.com',
  keys: ['sk-ab****yz', 'sk-cd****wx'],
  key_strategy: 'round_robin',
  models: ['gpt-4o-mini'],
  model_mapping: { 'gpt-4o-mini': 'gpt-4o-mini-2024' },
  groups: ['default'],
  priority: 5,
  weight: 2,
  status: 'auto_disabled',
  header_override: { 'X-Org': '****', Authorization: 'Bear****wxyz' },
  body_override: { set: { temperature: 0.2 }, delete: ['user'] },
  status_code_mapping: { '404': 500 },
  test_model: 'gpt-4o-mini',
  timeouts: { connect_ms: 1000, first_byte_ms: 0, idle_ms: 0, total_ms: 60000 },
  tag: 'prod',
  created_at: '2026-01-01T00:00:00Z',
};

describe('channel form', () => {
  it('reads one key per line, dropping blanks and duplicates', () => {
    expect(parseKeys(' sk-1 \n\nsk-2\r\nsk-1\n')).toEqual(['sk-1', 'sk-2']);
  });

  it('parses JSON override values and keeps plain text', () => {
    expect(parseOverrideValue('0.5')).toBe(0.5);
    expect(parseOverrideValue('true')).toBe(true);
    expect(parseOverrideValue('{"a":1}')).toEqual({ a: 1 });
    expect(parseOverrideValue('hello')).toBe('hello');
  });

  it('creates with keys, structured maps and enabled status', () => {
    const body = formToChannel({
      ...DEFAULT_CHANNEL_VALUES,
      name: 'up',
      base_url: 'http://127.0.0.1:9000/',
      keys_text: 'sk-a\nsk-b',
      models: ['gpt-4o-mini'],
      model_mapping: [{ key: 'gpt-4o-mini', value: 'gpt-4o-mini-2024' }],
      status_code_mapping: [{ key: '404', value: '500' }],
      body_set: [{ key: 'temperature', value: '0.2' }],
    });
    expect(body).toMatchObject({
      base_url: 'http://127.0.0.1:9000',
      keys: ['sk-a', 'sk-b'],
      model_mapping: { 'gpt-4o-mini': 'gpt-4o-mini-2024' },
      status_code_mapping: { '404': 500 },
      body_override: { set: { temperature: 0.2 }, delete: [] },
      status: 'enabled',
      timeouts: { connect_ms: 0, first_byte_ms: 0, idle_ms: 0, total_ms: 0 },
    });
  });

  it('sends masked header values back unchanged, so the server keeps the stored ones', () => {
    const values = channelToForm(stored);
    values.header_override = [...values.header_override, { key: 'X-New', value: 'typed-value' }];
    expect(formToChannel(values, stored).header_override).toEqual({
      'X-Org': '****',
      Authorization: 'Bear****wxyz',
      'X-New': 'typed-value',
    });
  });

  it('round-trips a stored channel without touching keys or an auto-disabled status', () => {
    const body = formToChannel(channelToForm(stored), stored);
    expect(body.keys).toBeUndefined();
    expect(body.status).toBeUndefined();
    expect(body).toMatchObject({
      model_mapping: stored.model_mapping,
      header_override: stored.header_override,
      body_override: stored.body_override,
      status_code_mapping: stored.status_code_mapping,
      timeouts: stored.timeouts,
      key_strategy: 'round_robin',
      priority: 5,
      weight: 2,
      tag: 'prod',
    });
  });

  it('round-trips the concurrency caps, empty meaning no cap', () => {
    const values = channelToForm({ ...stored, max_concurrency: 8, key_max_concurrency: 2 });
    expect(values.max_concurrency).toBe(8);
    expect(values.key_max_concurrency).toBe(2);
    expect(formToChannel(values, stored)).toMatchObject({ max_concurrency: 8, key_max_concurrency: 2 });
    const uncapped = channelToForm(stored);
    expect(uncapped.max_concurrency).toBeNull();
    expect(formToChannel({ ...uncapped, key_max_concurrency: null }, stored)).toMatchObject({ max_concurrency: 0, key_max_concurrency: 0 });
  });
});
