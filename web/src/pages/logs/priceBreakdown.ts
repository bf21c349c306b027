import type { LogPrice, UsageLog } from '../../api/types';
import { UNITS_PER_USD } from '../../lib/money';

export interface BreakdownLine {
  key: 'input' | 'output' | 'cache_read' | 'cache_write' | 'per_call' | 'images' | 'audio' | 'chars' | 'searches';
  /** Tokens, or the quantity of a unit beyond tokens (images, seconds, characters, searches). */
  tokens: number | null;
  /** USD per 1M tokens, per call, per image, per audio minute, per 1M characters or per 1,000 searches. */
  price: string;
  /** Cost before the group ratio, in units. */
  units: number;
}

function num(text: string | undefined | null): number {
  const n = Number(text ?? 0);
  return Number.isFinite(n) ? n : 0;
}

/**
 * How a log's cost was made: tokens × price per 1M tokens (one unit is one millionth of a dollar, so
 * that product is already in units), or the fixed per-call price; the group ratio then multiplies.
 */
export function priceBreakdown(log: UsageLog): { lines: BreakdownLine[]; subtotal: number; ratio: number } {
  const price = log.price ?? { input: '0', output: '0', cache_read: '0', cache_write: '0', per_call: '0' };
  const ratio = num(log.group_ratio || '1');
  if (num(price.per_call) !== 0) {
    const units = num(price.per_call) * UNITS_PER_USD;
    return { lines: [{ key: 'per_call', tokens: null, price: price.per_call, units }], subtotal: units, ratio };
  }
  const lines: BreakdownLine[] = [
    { key: 'input', tokens: log.prompt_tokens ?? 0, price: price.input, units: (log.prompt_tokens ?? 0) * num(price.input) },
    {
      key: 'output',
      tokens: log.completion_tokens ?? 0,
      price: price.output,
      units: (log.completion_tokens ?? 0) * num(price.output),
    },
  ];
  if (log.cache_read_tokens) {
    lines.push({
      key: 'cache_read',
      tokens: log.cache_read_tokens,
      price: price.cache_read,
      units: log.cache_read_tokens * num(price.cache_read),
    });
  }
  if (log.cache_write_tokens) {
    lines.push({
      key: 'cache_write',
      tokens: log.cache_write_tokens,
      price: price.cache_write,
      units: log.cache_write_tokens * num(price.cache_write),
    });
  }
  lines.push(...unitLines(price));
  return { lines, subtotal: lines.reduce((sum, l) => sum + l.units, 0), ratio };
}

/** Lines for what was billed beyond tokens: images, audio seconds, speech characters, rerank searches. */
function unitLines(price: LogPrice): BreakdownLine[] {
  const lines: BreakdownLine[] = [];
  if (price.images) {
    lines.push({ key: 'images', tokens: price.images, price: price.per_image ?? '0', units: price.images * num(price.per_image) * UNITS_PER_USD });
  }
  const seconds = num(price.audio_seconds);
  if (seconds) {
    lines.push({ key: 'audio', tokens: seconds, price: price.per_audio_minute ?? '0', units: (seconds / 60) * num(price.per_audio_minute) * UNITS_PER_USD });
  }
  if (price.chars) {
    lines.push({ key: 'chars', tokens: price.chars, price: price.per_1m_chars ?? '0', units: price.chars * num(price.per_1m_chars) });
  }
  if (price.searches) {
    lines.push({ key: 'searches', tokens: price.searches, price: price.per_1k_searches ?? '0', units: price.searches * num(price.per_1k_searches) * 1000 });
  }
  return lines;
}
