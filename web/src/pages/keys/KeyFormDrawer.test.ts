import dayjs from 'dayjs';
import { describe, expect, it } from 'vitest';
import { toTokenInput } from './KeyFormDrawer';

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
        remain_usd: '12.5',
        expires_at: expires,
        models: ['gpt-4o-mini'],
        allowed_ips: [' 10.0.0.0/8 '],
        group: 'vip',
        rpm: 60,
        concurrency: 2,
        daily_budget_usd: '0.0001',
        monthly_budget_usd: '25',
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
});
