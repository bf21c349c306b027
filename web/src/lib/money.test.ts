import { describe, expect, it } from 'vitest';
import { formatMoney, formatPrice, isDecimal, tokenCostUnits, unitsToUsdText, usdToUnits } from './money';

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
