import { useTranslation } from 'react-i18next';
import { formatDuration, formatNumber, formatPercent } from './format';
import { formatMoney, formatPrice } from './money';

/** Number and money formatters bound to the current UI language. */
export function useFormat() {
  const { i18n } = useTranslation();
  const locale = i18n.language || 'en';
  return {
    locale,
    money: (units: number | null | undefined) => formatMoney(units, locale),
    price: (usd: string | null | undefined) => formatPrice(usd, locale),
    number: (n: number | null | undefined) => formatNumber(n, locale),
    duration: (ms: number | null | undefined) => formatDuration(ms, locale),
    percent: (ratio: number | null | undefined) => formatPercent(ratio, locale),
  };
}
