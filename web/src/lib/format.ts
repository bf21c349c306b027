import dayjs from 'dayjs';
import './dayjsLocale';

/** Locale-aware integer formatting (tokens, requests). */
export function formatNumber(value: number | null | undefined, locale: string): string {
  return new Intl.NumberFormat(locale).format(Number(value ?? 0));
}

/** Milliseconds as "850 ms" or "1.25 s". */
export function formatDuration(ms: number | null | undefined, locale: string): string {
  const value = Number(ms ?? 0);
  if (value < 1000) return `${new Intl.NumberFormat(locale).format(value)} ms`;
  return `${new Intl.NumberFormat(locale, { maximumFractionDigits: 2 }).format(value / 1000)} s`;
}

/** A 0–1 ratio as a percentage. */
export function formatPercent(ratio: number | null | undefined, locale: string): string {
  return new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 1 }).format(Number(ratio ?? 0));
}

/** An RFC 3339 time in the browser's zone, or an empty string. */
export function formatTime(value: string | null | undefined): string {
  if (!value) return '';
  const d = dayjs(value);
  return d.isValid() ? d.format('YYYY-MM-DD HH:mm:ss') : value;
}
