import { describe, expect, it } from 'vitest';
import type { Channel } from '../../../api/types';
import { channelToForm, DEFAULT_CHANNEL_VALUES, formToChannel } from './channelForm';
import { hasTraffic } from './fleet';

const base = { id: 1, type: 'openai', name: 'c', base_url: 'http://u', keys: [], status: 'enabled', created_at: '' } as unknown as Channel;

describe('channel cost fields', () => {
  it('sends a price list with the ratio emptied, and per-model prices', () => {
    const body = formToChannel({
      ...DEFAULT_CHANNEL_VALUES,
      name: 'c',
      base_url: 'http://u',
      keys_text: 'sk',
      cost_mode: 'price',
      cost_price: { input: '0.10', output: ' 0.40 ', cache_read: '', cache_write: '', per_call: '' },
      cost_ratio: '0.7',
      cost_prices: [{ model: ' gpt-4o ', input: '2', output: '8', cache_read: '', cache_write: '', per_call: '' }],
    });
    expect(body.cost_price).toEqual({ input: '0.10', output: '0.40', cache_read: '0', cache_write: '0', per_call: '0' });
    expect(body.cost_ratio).toBe('');
    expect(body.cost_prices).toEqual({ 'gpt-4o': { input: '2', output: '8', cache_read: '0', cache_write: '0', per_call: '0' } });
  });

  it('sends a ratio with the price emptied, and nothing when not set', () => {
    const ratio = formToChannel({ ...DEFAULT_CHANNEL_VALUES, name: 'c', base_url: 'http://u', cost_mode: 'ratio', cost_ratio: '0.7' });
    expect(ratio.cost_ratio).toBe('0.7');
    expect(ratio.cost_price).toEqual({ input: '0', output: '0', cache_read: '0', cache_write: '0', per_call: '0' });
    const none = formToChannel({ ...DEFAULT_CHANNEL_VALUES, name: 'c', base_url: 'http://u' });
    expect(none.cost_ratio).toBe('');
    expect(none.cost_prices).toEqual({});
  });

  it('reads the stored terms back into the form', () => {
    const price = channelToForm({
      ...base,
      cost_price: { input: '0.1', output: '0.4', cache_read: '0', cache_write: '0', per_call: '0' },
      cost_ratio: null,
      cost_prices: { m: { input: '1', output: '2', cache_read: '0', cache_write: '0', per_call: '0' } },
    });
    expect(price.cost_mode).toBe('price');
    expect(price.cost_price).toEqual({ input: '0.1', output: '0.4', cache_read: '', cache_write: '', per_call: '' });
    expect(price.cost_prices).toEqual([{ model: 'm', input: '1', output: '2', cache_read: '', cache_write: '', per_call: '' }]);
    expect(channelToForm({ ...base, cost_price: null, cost_ratio: '0.7' }).cost_mode).toBe('ratio');
    expect(channelToForm(base).cost_mode).toBe('none');
  });

  it('counts traffic by attempts, so an idle window never reads as 100 %', () => {
    expect(hasTraffic(undefined)).toBe(false);
    expect(hasTraffic({ attempts: 0, success_rate: 1 } as never)).toBe(false);
    expect(hasTraffic({ attempts: 3, success_rate: 1 } as never)).toBe(true);
  });
});
