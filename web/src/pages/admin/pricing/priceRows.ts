import type { PriceRow, PriceTierRow } from '../../../api/types';

export const TOKEN_FIELDS = ['input', 'output', 'cache_read', 'cache_write', 'per_call'] as const;
export const UNIT_FIELDS = ['per_image', 'per_audio_minute', 'per_1m_chars', 'per_1k_searches'] as const;

/** A price row as the editor holds it: per-image sizes as a list of pairs (a map cannot be a Form.List). */
export type PriceFormRow = Omit<PriceRow, 'per_image_by_size'> & { sizes?: { size: string; price: string }[] };

export const EMPTY_ROW: PriceFormRow = { model: '', input: '0', output: '0', cache_read: '0', cache_write: '0', per_call: '0' };

/** A per_image_by_size key: WIDTHxHEIGHT (or auto), optionally /quality — what the server accepts. */
export const SIZE_KEY = /^([0-9]{1,5}x[0-9]{1,5}|auto)(\/[a-z]{1,16})?$/;

/** The API's rows as the editor holds them. */
export function toFormRows(rows: PriceRow[]): PriceFormRow[] {
  return rows.map(({ per_image_by_size, ...row }) => ({
    ...row,
    sizes: Object.entries(per_image_by_size ?? {})
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([size, price]) => ({ size, price })),
  }));
}

/** Normalizes edited rows for PUT: trimmed, blank token prices as "0", blank unit prices, sizes and tiers left out. */
export function cleanPriceRows(rows: PriceFormRow[]): PriceRow[] {
  return rows.map((row) => {
    const { sizes, tiers, ...rest } = row;
    const out: PriceRow = { ...rest, model: row.model.trim() };
    for (const field of TOKEN_FIELDS) out[field] = String(row[field] ?? '').trim() || '0';
    for (const field of UNIT_FIELDS) {
      const v = String(row[field] ?? '').trim();
      if (v) out[field] = v;
      else delete out[field];
    }
    const bySize = (sizes ?? []).filter((s) => s?.size?.trim());
    if (bySize.length) out.per_image_by_size = Object.fromEntries(bySize.map((s) => [s.size.trim(), String(s.price ?? '').trim() || '0']));
    const cleanTiers: PriceTierRow[] = (tiers ?? [])
      .filter((t) => t && Number(t.above_prompt_tokens) > 0)
      .map((t) => ({
        above_prompt_tokens: Number(t.above_prompt_tokens),
        input: String(t.input ?? '').trim() || '0',
        output: String(t.output ?? '').trim() || '0',
      }));
    if (cleanTiers.length) out.tiers = cleanTiers;
    return out;
  });
}
