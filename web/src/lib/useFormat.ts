import { useTranslation } from 'react-i18next';
import { useSiteStatus } from '../api/auth';
import { formatDuration, formatNumber, formatPercent } from './format';
import { displayFrom, displayToUnits, formatAmount, formatMoney, formatPrice, unitsToDisplayText } from './money';

/** Number and money formatters bound to the current UI language and the site's display currency. */
export function useFormat() {
  const { t, i18n } = useTranslation();
  const status = useSiteStatus();
  const locale = i18n.language || 'en';
  const display = displayFrom(status.data);
  return {
    locale,
    display,
    money: (units: number | null | undefined) => formatMoney(units, locale, display),
    price: (usd: string | null | undefined) => formatPrice(usd, locale, display),
    amount: (amount: string | null | undefined, currency: string) => formatAmount(amount, currency, locale),
    number: (n: number | null | undefined) => formatNumber(n, locale),
    duration: (ms: number | null | undefined) => formatDuration(ms, locale),
    percent: (ratio: number | null | undefined) => formatPercent(ratio, locale),
    /** Money typed in forms, in the display currency: the field's affixes and the exact conversions. */
    moneyInput: {
      prefix: display.currency === 'USD' ? '$' : display.currency === 'CNY' ? '¥' : undefined,
      suffix: display.currency === 'units' ? t('common.units') : undefined,
      toUnits: (text: string | number) => displayToUnits(text, display),
      toText: (units: number) => unitsToDisplayText(units, display),
    },
  };
}
