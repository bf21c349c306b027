import { describe, expect, it } from 'vitest';
import { amountProblem, bonusTier, inviteLink, quoteTopup, returnedOrder } from './walletLogic';

const epay = { rate: '7.3', min_amount: '1', max_amount: '10000' };
const tiers = [
  { min_amount: '100', percent: '10' },
  { min_amount: '50', percent: '5' },
  { min_amount: '1000', percent: '0' },
];

describe('quoteTopup', () => {
  it('buys units at the provider rate, half away from zero', () => {
    expect(quoteTopup('10.00', epay, [])).toEqual({ base: 1_369_863, bonus: 0, percent: null, total: 1_369_863 });
    expect(quoteTopup('10', { rate: '1' }, [])?.total).toBe(10_000_000);
  });

  it('adds the best bonus tier reached', () => {
    expect(quoteTopup('100', epay, tiers)).toEqual({ base: 13_698_630, bonus: 1_369_863, percent: '10', total: 15_068_493 });
    // The bonus is the units of (amount × percent) at the rate, rounded once: 1.03 × 5 % = 0.0515 CNY → 7,055 units.
    expect(quoteTopup('1.03', epay, [{ min_amount: '1', percent: '5' }])).toEqual({ base: 141_096, bonus: 7_055, percent: '5', total: 148_151 });
    expect(quoteTopup('99.99', epay, tiers)?.percent).toBe('5');
    expect(quoteTopup('49', epay, tiers)?.bonus).toBe(0);
    // A 0 % tier is no bonus even when it is the highest reached.
    expect(bonusTier('2000', tiers)?.percent).toBe('10');
  });

  it('quotes nothing for text that is not an amount', () => {
    expect(quoteTopup('', epay, tiers)).toBeNull();
    expect(quoteTopup('abc', epay, tiers)).toBeNull();
    expect(quoteTopup('0', epay, tiers)).toBeNull();
    expect(quoteTopup('-5', epay, tiers)).toBeNull();
  });
});

describe('amountProblem', () => {
  it('accepts amounts inside the limits', () => {
    expect(amountProblem('10', epay)).toBeNull();
    expect(amountProblem(' 10.50 ', epay)).toBeNull();
    expect(amountProblem('1', epay)).toBeNull();
    expect(amountProblem('10000', epay)).toBeNull();
    expect(amountProblem('10.500', epay)).toBeNull();
  });

  it('names what is wrong', () => {
    expect(amountProblem('', epay)?.key).toBe('amountInvalid');
    expect(amountProblem('1e3', epay)?.key).toBe('amountInvalid');
    expect(amountProblem('-3', epay)?.key).toBe('amountInvalid');
    expect(amountProblem('0', epay)?.key).toBe('amountInvalid');
    expect(amountProblem('10.001', epay)).toEqual({ key: 'amountPrecision', values: { decimals: '2' } });
    expect(amountProblem('10.5', { ...epay, currency: 'JPY' })).toEqual({ key: 'amountPrecision', values: { decimals: '0' } });
    expect(amountProblem('0.99', epay)).toEqual({ key: 'amountMin', values: { min: '1' } });
    expect(amountProblem('10000.01', epay)).toEqual({ key: 'amountMax', values: { max: '10000' } });
  });

  it('treats a zero maximum as no maximum', () => {
    expect(amountProblem('99999', { min_amount: '1', max_amount: '0' })).toBeNull();
  });
});

describe('links', () => {
  it('builds the invite link on this origin', () => {
    expect(inviteLink('https://gw.example.com/', 'AbC 1')).toBe('https://gw.example.com/register?aff=AbC%201');
  });

  it('reads the order from our return URL or from Epay\'s parameters', () => {
    expect(returnedOrder(new URLSearchParams('order=T1'))).toBe('T1');
    expect(returnedOrder(new URLSearchParams('pid=1&out_trade_no=T2&trade_status=TRADE_SUCCESS'))).toBe('T2');
    expect(returnedOrder(new URLSearchParams(''))).toBeNull();
  });
});
