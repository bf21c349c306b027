/** Quota units per US dollar: balances, costs and holds are integers in these units. */
export const UNITS_PER_USD = 1_000_000;

/**
 * Formats quota units as US dollars for a locale. Amounts under a cent keep six decimals so the
 * cost of a single small call stays visible (50 units → $0.000050).
 */
export function formatMoney(units: number | null | undefined, locale: string): string {
  const value = Number(units ?? 0);
  const usd = value / UNITS_PER_USD;
  const abs = Math.abs(usd);
  const tiny = abs > 0 && abs < 0.01;
  return new Intl.NumberFormat(locale, {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: tiny ? 6 : 2,
    maximumFractionDigits: tiny ? 6 : abs < 1 ? 4 : 2,
  }).format(usd);
}

/** Formats a decimal USD string price (e.g. "0.15" per 1M tokens) without losing digits. */
export function formatPrice(price: string | null | undefined, locale: string): string {
  const n = Number(price ?? 0);
  if (!Number.isFinite(n)) return String(price);
  const decimals = decimalPlaces(price ?? '0');
  return new Intl.NumberFormat(locale, {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: Math.min(Math.max(decimals, 2), 10),
    maximumFractionDigits: Math.min(Math.max(decimals, 2), 10),
  }).format(n);
}

function decimalPlaces(text: string): number {
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : text.length - dot - 1;
}

const DECIMAL = /^\s*([+-])?(\d*)(?:\.(\d*))?\s*$/;

/** True when text is a plain non-negative decimal like "0.15" or "2". */
export function isDecimal(text: string, allowNegative = false): boolean {
  const m = DECIMAL.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return false;
  return allowNegative || m[1] !== '-';
}

/**
 * Converts a USD amount typed by a person ("1.5", "-0.25") to integer quota units exactly, without
 * floating-point error. Digits beyond the sixth decimal are rounded half away from zero.
 * Returns null for text that is not a decimal number.
 */
export function usdToUnits(text: string | number): number | null {
  const m = DECIMAL.exec(String(text));
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return null;
  const sign = m[1] === '-' ? -1 : 1;
  const whole = m[2] || '0';
  const frac = (m[3] ?? '').padEnd(7, '0');
  let units = Number(whole) * UNITS_PER_USD + Number(frac.slice(0, 6));
  if (Number(frac[6]) >= 5) units += 1;
  return units === 0 ? 0 : sign * units;
}

/** Units → a plain USD decimal string for form fields ("1.5"). */
export function unitsToUsdText(units: number): string {
  const sign = units < 0 ? '-' : '';
  const abs = Math.abs(Math.trunc(units));
  const whole = Math.floor(abs / UNITS_PER_USD);
  const frac = String(abs % UNITS_PER_USD).padStart(6, '0').replace(/0+$/, '');
  return sign + String(whole) + (frac ? `.${frac}` : '');
}

/**
 * The cost in units of `tokens` at `pricePerMillion` USD per 1M tokens: since one unit is one
 * millionth of a dollar, it is simply tokens × price.
 */
export function tokenCostUnits(tokens: number, pricePerMillion: string, ratio = '1'): number {
  return tokens * Number(pricePerMillion || 0) * Number(ratio || 1);
}
