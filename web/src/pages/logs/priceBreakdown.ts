import type { UsageLog } from '../../api/types';
import { UNITS_PER_USD } from '../../lib/money';

export interface BreakdownLine {
  key: 'input' | 'output' | 'cache_read' | 'cache_write' | 'per_call';
  tokens: number | null;
  /** USD per 1M tokens, or USD per call for per_call. */
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
  return { lines, subtotal: lines.reduce((sum, l) => sum + l.units, 0), ratio };
}
