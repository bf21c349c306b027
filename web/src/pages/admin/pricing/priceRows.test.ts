import { describe, expect, it } from 'vitest';
import { cleanPriceRows, toFormRows } from './priceRows';

describe('price rows', () => {
  it('round-trips sizes and tiers and leaves blank unit prices out', () => {
    const api = [
      {
        model: 'dall-e-3',
        input: '0',
        output: '0',
        cache_read: '0',
        cache_write: '0',
        per_call: '0',
        per_image: '0.04',
        per_image_by_size: { '1024x1792/hd': '0.12', '1024x1024': '0.04' },
        tiers: [{ above_prompt_tokens: 200000, input: '2.5', output: '15' }],
      },
    ];
    const form = toFormRows(api);
    expect(form[0].sizes).toEqual([
      { size: '1024x1024', price: '0.04' },
      { size: '1024x1792/hd', price: '0.12' },
    ]);
    expect(cleanPriceRows(form)).toEqual(api);
  });

  it('cleans edited rows for the PUT', () => {
    const [row] = cleanPriceRows([
      {
        model: ' tts-1 ',
        input: '',
        output: ' 2 ',
        cache_read: '0',
        cache_write: '0',
        per_call: '0',
        per_1m_chars: ' 15 ',
        per_image: '  ',
        sizes: [{ size: '', price: '1' }],
        tiers: [{ above_prompt_tokens: 0, input: '1', output: '1' }],
      },
    ]);
    expect(row).toEqual({ model: 'tts-1', input: '0', output: '2', cache_read: '0', cache_write: '0', per_call: '0', per_1m_chars: '15' });
  });
});
