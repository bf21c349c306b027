import type { BonusTier, TopupProviderOption } from '../../api/types';
import { amountToUnits, compareDecimal, parseDecimal, percentOfAmount } from '../../lib/money';

/** Why an amount cannot be paid, as an i18n key under `wallet.` with its values. */
export interface AmountProblem {
  key: 'amountInvalid' | 'amountPrecision' | 'amountMin' | 'amountMax';
  values?: Record<string, string>;
}

export interface TopupQuote {
  /** Units the amount buys at the provider's rate. */
  base: number;
  /** Extra units from the best bonus tier reached. */
  bonus: number;
  /** The tier's percent ("10"), or null without bonus. */
  percent: string | null;
  total: number;
}

/** The minor digits of a currency (2 for CNY and USD, 0 for JPY), as the server checks them. */
export function currencyDecimals(currency: string | undefined): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency: (currency || 'USD').toUpperCase() }).resolvedOptions()
      .maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/** Checks a typed amount against the provider's limits; null when it may be paid. */
export function amountProblem(
  amount: string,
  provider: Pick<TopupProviderOption, 'min_amount' | 'max_amount'> & { currency?: string },
): AmountProblem | null {
  const text = amount.trim();
  const value = parseDecimal(text);
  if (!value || /^\s*[-+]/.test(text) || value.int <= 0n) return { key: 'amountInvalid' };
  const decimals = currencyDecimals(provider.currency);
  if (value.scale > decimals && value.int % 10n ** BigInt(value.scale - decimals) !== 0n) {
    return { key: 'amountPrecision', values: { decimals: String(decimals) } };
  }
  if (provider.min_amount && compareDecimal(text, provider.min_amount) === -1) {
    return { key: 'amountMin', values: { min: provider.min_amount } };
  }
  if (provider.max_amount && compareDecimal(provider.max_amount, '0') === 1 && compareDecimal(text, provider.max_amount) === 1) {
    return { key: 'amountMax', values: { max: provider.max_amount } };
  }
  return null;
}

/** The bonus tier an amount reaches: the one with the highest min_amount not above it. */
export function bonusTier(amount: string, tiers: BonusTier[]): BonusTier | null {
  let best: BonusTier | null = null;
  for (const tier of tiers ?? []) {
    if (compareDecimal(amount, tier.min_amount) === -1) continue;
    if (!parseDecimal(tier.percent) || compareDecimal(tier.percent, '0') !== 1) continue;
    if (!best || compareDecimal(tier.min_amount, best.min_amount) === 1) best = tier;
  }
  return best;
}

/**
 * What an amount buys before paying, as the server computes it: units of the amount at the rate, plus units
 * of (amount × the best tier's percent / 100) at the rate, each rounded once, half away from zero.
 */
export function quoteTopup(amount: string, provider: Pick<TopupProviderOption, 'rate'>, tiers: BonusTier[]): TopupQuote | null {
  const base = amountToUnits(amount.trim(), provider.rate);
  if (base === null || base <= 0) return null;
  const tier = bonusTier(amount.trim(), tiers);
  const bonus = tier ? (amountToUnits(percentOfAmount(amount.trim(), tier.percent), provider.rate) ?? 0) : 0;
  return { base, bonus, percent: tier?.percent ?? null, total: base + bonus };
}

/** The sign-up link that carries an invite code. */
export function inviteLink(origin: string, code: string): string {
  return `${origin.replace(/\/$/, '')}/register?aff=${encodeURIComponent(code)}`;
}

/** The order number a return page was opened with: ours (`order`), or the one Epay appends (`out_trade_no`). */
export function returnedOrder(search: URLSearchParams): string | null {
  return search.get('order') || search.get('order_no') || search.get('out_trade_no') || null;
}
