import { describe, expect, it } from 'vitest';
import type { UsageLog } from '../../api/types';
import { priceBreakdown } from './priceBreakdown';

const base = {
  prompt_tokens: 10,
  completion_tokens: 20,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  cost: 50,
  group_ratio: '1',
  price: { input: '1', output: '2', cache_read: '0', cache_write: '0', per_call: '0' },
} as unknown as UsageLog;

describe('priceBreakdown', () => {
  it('explains 10 input + 20 output tokens at $1/$2 per 1M as 50 units', () => {
    const b = priceBreakdown(base);
    expect(b.lines.map((l) => [l.key, l.units])).toEqual([
      ['input', 10],
      ['output', 40],
    ]);
    expect(b.subtotal * b.ratio).toBe(50);
  });

  it('uses the per-call price alone when set', () => {
    const b = priceBreakdown({ ...base, price: { ...base.price, per_call: '0.01' } });
    expect(b.lines).toHaveLength(1);
    expect(b.subtotal).toBe(10_000);
  });

  it('adds cache lines only when there were cache tokens', () => {
    const b = priceBreakdown({ ...base, cache_read_tokens: 100, price: { ...base.price, cache_read: '0.5' }, group_ratio: '2' });
    expect(b.lines.map((l) => l.key)).toEqual(['input', 'output', 'cache_read']);
    expect(b.ratio).toBe(2);
  });

  it('adds lines for images, audio, characters and searches with their unit prices', () => {
    const b = priceBreakdown({
      ...base,
      prompt_tokens: 0,
      completion_tokens: 0,
      price: { ...base.price, images: 2, per_image: '0.04', audio_seconds: '3', per_audio_minute: '0.006', chars: 1000, per_1m_chars: '15', searches: 1, per_1k_searches: '2' },
    });
    expect(b.lines.filter((l) => l.units).map((l) => [l.key, l.tokens, Math.round(l.units)])).toEqual([
      ['images', 2, 80_000],
      ['audio', 3, 300],
      ['chars', 1000, 15_000],
      ['searches', 1, 2_000],
    ]);
  });
});
