/** Quota units per US dollar: balances, costs and holds are integers in these units. */
export const UNITS_PER_USD = 1_000_000;

/** How the site shows money (setting `display_currency`): dollars, yuan at `display_rate`, or raw units. */
export type DisplayCurrency = 'USD' | 'CNY' | 'units';

export interface MoneyDisplay {
  currency: DisplayCurrency;
  /** CNY per 1 USD (decimal string); only used for CNY. */
  rate: string;
}

export const USD_DISPLAY: MoneyDisplay = { currency: 'USD', rate: '1' };

/** The display of /api/status (`display_currency`, `display_rate`), falling back to USD for unknown values. */
export function displayFrom(status?: { display_currency?: string; display_rate?: string } | null): MoneyDisplay {
  const currency = status?.display_currency;
  if (currency === 'CNY' && isDecimal(status?.display_rate ?? '') && parseDecimal(status?.display_rate ?? '')!.int > 0n) {
    return { currency: 'CNY', rate: status!.display_rate!.trim() };
  }
  if (currency === 'units') return { currency: 'units', rate: '1' };
  return USD_DISPLAY;
}

// ---- exact decimals (BigInt): no float error in money, ever ----

interface Decimal {
  /** The digits as an integer: value = int / 10^scale. */
  int: bigint;
  scale: number;
}

const DECIMAL = /^\s*([+-])?(\d*)(?:\.(\d*))?\s*$/;

/** Parses "12.50" / "-0.1" exactly; null when text is not a plain decimal. */
export function parseDecimal(text: string | number): Decimal | null {
  const m = DECIMAL.exec(String(text));
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return null;
  const frac = m[3] ?? '';
  const int = BigInt((m[2] || '0') + frac);
  return { int: m[1] === '-' ? -int : int, scale: frac.length };
}

const pow10 = (n: number) => 10n ** BigInt(n);
const abs = (n: bigint) => (n < 0n ? -n : n);

/** num / den rounded half away from zero (den > 0). */
function divRound(num: bigint, den: bigint): bigint {
  const q = (abs(num) * 2n + den) / (den * 2n);
  return num < 0n ? -q : q;
}

/** value rounded half away from zero to `places` decimals, as a Decimal of that scale. */
function roundTo(value: Decimal, places: number): Decimal {
  if (value.scale <= places) return { int: value.int * pow10(places - value.scale), scale: places };
  return { int: divRound(value.int, pow10(value.scale - places)), scale: places };
}

function multiply(a: Decimal, b: Decimal): Decimal {
  return { int: a.int * b.int, scale: a.scale + b.scale };
}

/** A plain decimal string ("-1.50") with at least `min` decimals and trailing zeros beyond them trimmed. */
function toText(value: Decimal, min: number): string {
  const sign = value.int < 0n ? '-' : '';
  const digits = abs(value.int).toString().padStart(value.scale + 1, '0');
  const whole = digits.slice(0, digits.length - value.scale);
  let frac = value.scale ? digits.slice(digits.length - value.scale) : '';
  while (frac.length > min && frac.endsWith('0')) frac = frac.slice(0, -1);
  frac = frac.padEnd(min, '0');
  return sign + whole + (frac ? `.${frac}` : '');
}

function fractionDigits(text: string): number {
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : text.length - dot - 1;
}

/** Intl formats a decimal string exactly (Intl.NumberFormat v3). */
function intlFormat(text: string, locale: string, options: Intl.NumberFormatOptions): string {
  const decimals = fractionDigits(text);
  return new Intl.NumberFormat(locale, { ...options, minimumFractionDigits: decimals, maximumFractionDigits: decimals }).format(
    text as Intl.StringNumericLiteral,
  );
}

function currencyFormat(text: string, locale: string, currency: 'USD' | 'CNY'): string {
  return intlFormat(text, locale, { style: 'currency', currency, currencyDisplay: 'narrowSymbol' });
}

/**
 * Formats quota units for a locale in the site's display currency, never rounding a spend away:
 * - USD: every significant decimal up to six (1 unit = $0.000001), at least two: $4.99985, $0.50, $1,234.50;
 *   amounts under a cent keep six decimals so one small call stays readable ($0.000050).
 * - CNY: the same at `rate` yuan per dollar (¥36.5, ¥0.000365), rounded half away from zero to six decimals.
 * - units: the raw integer with thousands separators (1,234,567).
 */
export function formatMoney(units: number | null | undefined, locale: string, display: MoneyDisplay = USD_DISPLAY): string {
  const n = Math.round(Number(units ?? 0)) || 0;
  if (display.currency === 'units') return new Intl.NumberFormat(locale, { maximumFractionDigits: 0 }).format(n);
  let value: Decimal = { int: BigInt(n), scale: 6 };
  if (display.currency === 'CNY') value = roundTo(multiply(value, parseDecimal(display.rate) ?? { int: 1n, scale: 0 }), 6);
  const tiny = value.int !== 0n && abs(value.int) < 10_000n;
  return currencyFormat(toText(value, tiny ? 6 : 2), locale, display.currency);
}

/**
 * Formats a decimal USD price (e.g. "0.15" per 1M tokens) in the display currency without losing digits:
 * CNY multiplies exactly by the rate; units shows units per 1M tokens (price × 1,000,000).
 */
export function formatPrice(price: string | null | undefined, locale: string, display: MoneyDisplay = USD_DISPLAY): string {
  const value = parseDecimal(price ?? '0');
  if (!value) return String(price);
  if (display.currency === 'units') {
    const units = value.scale <= 6 ? { int: value.int * pow10(6 - value.scale), scale: 0 } : { int: value.int, scale: value.scale - 6 };
    return intlFormat(toText(units, 0), locale, {});
  }
  const shown = display.currency === 'CNY' ? multiply(value, parseDecimal(display.rate) ?? { int: 1n, scale: 0 }) : value;
  const capped = shown.scale > 10 ? roundTo(shown, 10) : shown;
  return currencyFormat(toText(capped, 2), locale, display.currency);
}

/** A decimal amount in a provider's currency ("10.00" CNY) for a locale: ¥10.00, $10.00, or "10.00 EUR". */
export function formatAmount(amount: string | null | undefined, currency: string, locale: string): string {
  const value = parseDecimal(amount ?? '0');
  if (!value) return `${amount ?? ''} ${currency}`.trim();
  try {
    return intlFormat(toText(value, 2), locale, { style: 'currency', currency: currency.toUpperCase(), currencyDisplay: 'narrowSymbol' });
  } catch {
    return `${toText(value, 2)} ${currency}`;
  }
}

/** True when text is a plain non-negative decimal like "0.15" or "2". */
export function isDecimal(text: string, allowNegative = false): boolean {
  const value = parseDecimal(text);
  return value !== null && (allowNegative || !/^\s*-/.test(text));
}

/**
 * Converts an amount typed by a person ("1.5", "-0.25") in a currency worth `rate` per 1 USD to integer
 * quota units exactly: amount ÷ rate × 1,000,000, rounded half away from zero (the server's rule).
 * Returns null for text that is not a decimal number or a rate that is not positive.
 */
export function amountToUnits(text: string | number, rate: string | number = '1'): number | null {
  const amount = parseDecimal(text);
  const r = parseDecimal(rate);
  if (!amount || !r || r.int <= 0n) return null;
  // (a / 10^sa) / (r / 10^sr) × 10^6 = a × 10^(6+sr) / (r × 10^sa)
  const units = divRound(amount.int * pow10(6 + r.scale), r.int * pow10(amount.scale));
  return Number(units) || 0;
}

/** A USD amount typed by a person to integer units; beyond the sixth decimal rounds half away from zero. */
export function usdToUnits(text: string | number): number | null {
  return amountToUnits(text, '1');
}

/** Units → a plain USD decimal string for form fields ("1.5"). */
export function unitsToUsdText(units: number): string {
  return toText({ int: BigInt(Math.trunc(units)), scale: 6 }, 0);
}

/**
 * An amount typed in the display currency to integer units, exactly: USD × 1,000,000, CNY ÷ rate × 1,000,000
 * (half away from zero), units as typed (rounded to a whole unit). Null when text is not a number.
 */
export function displayToUnits(text: string | number, display: MoneyDisplay = USD_DISPLAY): number | null {
  if (display.currency === 'units') {
    const value = parseDecimal(text);
    return value ? Number(roundTo(value, 0).int) || 0 : null;
  }
  return amountToUnits(text, display.currency === 'CNY' ? display.rate : '1');
}

/** Units as a plain decimal for a form field in the display currency ("1.5", "10.95", "1500000"). */
export function unitsToDisplayText(units: number, display: MoneyDisplay = USD_DISPLAY): string {
  const value: Decimal = { int: BigInt(Math.trunc(units)), scale: display.currency === 'units' ? 0 : 6 };
  if (display.currency !== 'CNY') return toText(value, 0);
  return toText(roundTo(multiply(value, parseDecimal(display.rate) ?? { int: 1n, scale: 0 }), 6), 0);
}

/** `units × percent / 100`, rounded half away from zero ("5" → 5 %). */
export function percentOf(units: number, percent: string): number {
  const p = parseDecimal(percent);
  if (!p || p.int <= 0n) return 0;
  return Number(divRound(BigInt(Math.trunc(units)) * p.int, 100n * pow10(p.scale)));
}

/** `amount × percent / 100` exactly, as a decimal string ("100" × "10" → "10.000"). */
export function percentOfAmount(amount: string, percent: string): string {
  const a = parseDecimal(amount);
  const p = parseDecimal(percent);
  if (!a || !p) return '0';
  return toText({ int: a.int * p.int, scale: a.scale + p.scale + 2 }, 0);
}

/** Compares two decimal strings: -1, 0 or 1 (null when either is not a decimal). */
export function compareDecimal(a: string, b: string): number | null {
  const x = parseDecimal(a);
  const y = parseDecimal(b);
  if (!x || !y) return null;
  const scale = Math.max(x.scale, y.scale);
  const xi = x.int * pow10(scale - x.scale);
  const yi = y.int * pow10(scale - y.scale);
  return xi === yi ? 0 : xi < yi ? -1 : 1;
}

/**
 * The cost in units of `tokens` at `pricePerMillion` USD per 1M tokens: since one unit is one
 * millionth of a dollar, it is simply tokens × price.
 */
export function tokenCostUnits(tokens: number, pricePerMillion: string, ratio = '1'): number {
  return tokens * Number(pricePerMillion || 0) * Number(ratio || 1);
}
