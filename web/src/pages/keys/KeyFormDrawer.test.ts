import dayjs from 'dayjs';
import { describe, expect, it } from 'vitest';
import { displayToUnits } from '../../lib/money';
import { cleanFallbacks, toTokenInput } from './KeyFormDrawer';

describe('toTokenInput', () => {
  it('omits quota for unlimited keys and empty optional fields on create', () => {
    expect(toTokenInput({ name: ' ci ', unlimited: true, models: [], allowed_ips: [] })).toEqual({
      name: 'ci',
      unlimited: true,
      models: [],
      allowed_ips: [],
      rpm: 0,
      concurrency: 0,
      daily_budget: 0,
      monthly_budget: 0,
      tpm: 0,
    });
  });

  it('converts a typed dollar quota to units and sends every field', () => {
    const expires = dayjs('2030-01-02T03:04:05Z');
    expect(
      toTokenInput({
        name: 'bot',
        unlimited: false,
        remain_amount: '12.5',
        expires_at: expires,
        models: ['gpt-4o-mini'],
        allowed_ips: [' 10.0.0.0/8 '],
        group: 'vip',
        rpm: 60,
        concurrency: 2,
        daily_budget_amount: '0.0001',
        monthly_budget_amount: '25',
        tpm: 1000,
      }),
    ).toEqual({
      name: 'bot',
      unlimited: false,
      remain_quota: 12_500_000,
      expires_at: '2030-01-02T03:04:05.000Z',
      models: ['gpt-4o-mini'],
      allowed_ips: ['10.0.0.0/8'],
      group: 'vip',
      rpm: 60,
      concurrency: 2,
      daily_budget: 100,
      monthly_budget: 25_000_000,
      tpm: 1000,
    });
  });

  it('clears expiry and group on update', () => {
    const body = toTokenInput({ name: 'x', unlimited: true }, true);
    expect(body.expires_at).toBeNull();
    expect(body.group).toBe('');
  });

  it('reads money in the display currency it is given', () => {
    const cny = (text: string) => displayToUnits(text, { currency: 'CNY', rate: '7.3' });
    const body = toTokenInput({ name: 'x', unlimited: false, remain_amount: '73', daily_budget_amount: '7.3' }, false, cny);
    expect(body.remain_quota).toBe(10_000_000);
    expect(body.daily_budget).toBe(1_000_000);
  });

  it('sends fallback groups in the order chosen, without the key\'s own group, and clears them on update', () => {
    expect(toTokenInput({ name: 'x', unlimited: true, group: 'gpt-shared', fallback_groups: ['gpt-backup', 'gpt-shared', 'cheap'] }).fallback_groups).toEqual([
      'gpt-backup',
      'cheap',
    ]);
    expect(toTokenInput({ name: 'x', unlimited: true, fallback_groups: [] })).not.toHaveProperty('fallback_groups');
    expect(toTokenInput({ name: 'x', unlimited: true }, true).fallback_groups).toEqual([]);
  });

  it('keeps at most five distinct fallbacks', () => {
    expect(cleanFallbacks(['a', 'b', 'a', ' ', 'c', 'd', 'e', 'f', 'g'], undefined)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(cleanFallbacks(undefined, 'a')).toEqual([]);
  });
  it('sends the key\'s routing preferences without empty fields, and clears them on an update', () => {
    const body = toTokenInput({ name: 'x', unlimited: true, routing: { strategy: 'cost', avoid: ['tag:a'], prefer: [], max_price: null } });
    expect(body.routing).toEqual({ strategy: 'cost', avoid: ['tag:a'] });
    expect(toTokenInput({ name: 'x', unlimited: true, routing: {} })).not.toHaveProperty('routing');
    expect(toTokenInput({ name: 'x', unlimited: true, routing: {} }, true).routing).toEqual({});
  });
});
