import { describe, expect, it } from 'vitest';
import {
  amountToUnits,
  displayToUnits,
  unitsToDisplayText,
  compareDecimal,
  displayFrom,
  formatAmount,
  formatMoney,
  formatPrice,
  isDecimal,
  percentOf,
  tokenCostUnits,
  unitsToUsdText,
  usdToUnits,
} from './money';

const CNY = { currency: 'CNY', rate: '7.3' } as const;
const UNITS = { currency: 'units', rate: '1' } as const;

describe('formatMoney', () => {
  it('shows the cost of one small call with six decimals', () => {
    expect(formatMoney(50, 'en')).toBe('$0.000050');
    expect(formatMoney(1, 'en')).toBe('$0.000001');
  });

  it('uses two to four decimals from a cent up and two from a dollar up', () => {
    expect(formatMoney(500_000, 'en')).toBe('$0.50');
    expect(formatMoney(123_400, 'en')).toBe('$0.1234');
    expect(formatMoney(1_234_500_000, 'en')).toBe('$1,234.50');
    expect(formatMoney(0, 'en')).toBe('$0.00');
  });

  it('keeps the sign of negative amounts', () => {
    expect(formatMoney(-2_500_000, 'en')).toBe('-$2.50');
  });

  it('formats per locale', () => {
    expect(formatMoney(1_234_500_000, 'zh-CN')).toMatch(/1,234\.50/);
    expect(formatMoney(50, 'zh-CN')).toContain('0.000050');
  });

  it('treats missing values as zero', () => {
    expect(formatMoney(undefined, 'en')).toBe('$0.00');
  });
});

describe('usdToUnits', () => {
  it('converts typed dollars to integer units without float error', () => {
    expect(usdToUnits('1')).toBe(1_000_000);
    expect(usdToUnits('0.1')).toBe(100_000);
    expect(usdToUnits('0.29')).toBe(290_000);
    expect(usdToUnits('19.99')).toBe(19_990_000);
    expect(usdToUnits('-2.5')).toBe(-2_500_000);
    expect(usdToUnits('.5')).toBe(500_000);
  });

  it('rounds beyond the sixth decimal half away from zero', () => {
    expect(usdToUnits('0.0000005')).toBe(1);
    expect(usdToUnits('0.0000004')).toBe(0);
    expect(usdToUnits('-0.0000015')).toBe(-2);
  });

  it('refuses text that is not a number', () => {
    expect(usdToUnits('abc')).toBeNull();
    expect(usdToUnits('')).toBeNull();
    expect(usdToUnits('1.2.3')).toBeNull();
    expect(usdToUnits('-')).toBeNull();
  });

  it('round-trips through unitsToUsdText', () => {
    for (const units of [0, 1, 50, 1_000_000, 19_990_000, -2_500_000, 123_456_789]) {
      expect(usdToUnits(unitsToUsdText(units))).toBe(units);
    }
    expect(unitsToUsdText(1_500_000)).toBe('1.5');
  });
});

describe('prices', () => {
  it('validates decimals', () => {
    expect(isDecimal('0.15')).toBe(true);
    expect(isDecimal('2')).toBe(true);
    expect(isDecimal('-1')).toBe(false);
    expect(isDecimal('-1', true)).toBe(true);
    expect(isDecimal('1e3')).toBe(false);
  });

  it('prices tokens in units as tokens × USD per 1M', () => {
    expect(tokenCostUnits(10, '1') + tokenCostUnits(20, '2')).toBe(50);
    expect(tokenCostUnits(10, '1', '1.5')).toBe(15);
  });

  it('keeps every digit of a price', () => {
    expect(formatPrice('0.075', 'en')).toBe('$0.075');
    expect(formatPrice('2', 'en')).toBe('$2.00');
  });
});

describe('formatMoney keeps every spent unit', () => {
  it('does not round a tiny spend away from a dollar balance', () => {
    expect(formatMoney(4_999_850, 'en')).toBe('$4.99985');
    expect(formatMoney(1_234_567, 'en')).toBe('$1.234567');
    expect(formatMoney(5_000_000, 'en')).toBe('$5.00');
    expect(formatMoney(999_999_999_999, 'en')).toBe('$999,999.999999');
  });

  it('shows yuan at the display rate, exactly', () => {
    expect(formatMoney(5_000_000, 'en', CNY)).toBe('¥36.50');
    expect(formatMoney(1_369_863, 'zh-CN', CNY)).toBe('¥10.00');
    expect(formatMoney(1_369_862, 'en', CNY)).toBe('¥9.999993');
    expect(formatMoney(50, 'en', CNY)).toBe('¥0.000365');
    expect(formatMoney(-1_000_000, 'en', CNY)).toBe('-¥7.30');
    expect(formatMoney(1, 'en', { currency: 'CNY', rate: '7.35' })).toBe('¥0.000007');
  });

  it('shows raw units with thousands separators', () => {
    expect(formatMoney(1_234_567, 'en', UNITS)).toBe('1,234,567');
    expect(formatMoney(50, 'en', UNITS)).toBe('50');
    expect(formatMoney(-2_500_000, 'en', UNITS)).toBe('-2,500,000');
  });

  it('reads the display from /api/status', () => {
    expect(displayFrom({ display_currency: 'CNY', display_rate: '7.1' })).toEqual({ currency: 'CNY', rate: '7.1' });
    expect(displayFrom({ display_currency: 'units', display_rate: '7.1' }).currency).toBe('units');
    expect(displayFrom({ display_currency: 'CNY', display_rate: 'x' }).currency).toBe('USD');
    expect(displayFrom({ display_currency: 'CNY', display_rate: '0' }).currency).toBe('USD');
    expect(displayFrom(undefined).currency).toBe('USD');
  });

  it('shows prices in the display currency', () => {
    expect(formatPrice('0.15', 'en', CNY)).toBe('¥1.095');
    expect(formatPrice('2', 'en', CNY)).toBe('¥14.60');
    expect(formatPrice('0.15', 'en', UNITS)).toBe('150,000');
    expect(formatPrice('0.0000001', 'en', UNITS)).toBe('0.1');
  });

  it('formats a provider amount in its currency', () => {
    expect(formatAmount('10.00', 'CNY', 'en')).toBe('¥10.00');
    expect(formatAmount('10', 'usd', 'en')).toBe('$10.00');
    expect(formatAmount('12.5', 'XYZ1', 'en')).toBe('12.50 XYZ1');
  });
});

describe('amountToUnits', () => {
  it('converts a provider amount at its rate, half away from zero', () => {
    expect(amountToUnits('10.00', '7.3')).toBe(1_369_863);
    expect(amountToUnits('10', '1')).toBe(10_000_000);
    expect(amountToUnits('7.3', '7.3')).toBe(1_000_000);
    expect(amountToUnits('0.0000073', '7.3')).toBe(1);
    expect(amountToUnits('0.00000365', '7.3')).toBe(1);
    expect(amountToUnits('-10', '7.3')).toBe(-1_369_863);
  });

  it('refuses bad amounts and rates', () => {
    expect(amountToUnits('abc', '7.3')).toBeNull();
    expect(amountToUnits('10', '0')).toBeNull();
    expect(amountToUnits('10', '-1')).toBeNull();
  });

  it('takes percentages and compares decimals exactly', () => {
    expect(percentOf(1_369_863, '10')).toBe(136_986);
    expect(percentOf(1_000_000, '2.5')).toBe(25_000);
    expect(percentOf(5, '10')).toBe(1);
    expect(percentOf(1_000_000, '0')).toBe(0);
    expect(compareDecimal('10.00', '10')).toBe(0);
    expect(compareDecimal('9.99', '10')).toBe(-1);
    expect(compareDecimal('100', '99.999')).toBe(1);
    expect(compareDecimal('x', '1')).toBeNull();
  });
});

describe('money typed in the display currency', () => {
  it('converts to units and back exactly', () => {
    expect(displayToUnits('1.5')).toBe(1_500_000);
    expect(displayToUnits('73', CNY)).toBe(10_000_000);
    expect(displayToUnits('10', CNY)).toBe(1_369_863);
    expect(displayToUnits('1500000.4', UNITS)).toBe(1_500_000);
    expect(displayToUnits('x', CNY)).toBeNull();
    expect(unitsToDisplayText(1_500_000)).toBe('1.5');
    expect(unitsToDisplayText(10_000_000, CNY)).toBe('73');
    expect(unitsToDisplayText(1_369_863, CNY)).toBe('10');
    expect(unitsToDisplayText(1_500_000, UNITS)).toBe('1500000');
    for (const units of [1, 50, 1_369_863, 123_456_789, -2_500_000]) {
      expect(displayToUnits(unitsToDisplayText(units, CNY), CNY)).toBe(units);
      expect(displayToUnits(unitsToDisplayText(units, UNITS), UNITS)).toBe(units);
    }
  });
});
