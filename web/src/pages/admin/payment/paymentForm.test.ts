import { describe, expect, it } from 'vitest';
import type { Settings } from '../../../api/types';
import { fieldPath, toPaymentBody, toPaymentForm } from './paymentForm';

const stored = {
  site_name: 'T',
  payment: {
    epay: { enabled: false, gateway_url: '', pid: '', key: 'ab****yz', methods: ['alipay'], currency: 'CNY', rate: '7.3', min_amount: '1', max_amount: '10000' },
    stripe: { enabled: false, secret_key: '', webhook_secret: 'wh****12', currency: 'USD', rate: '1', min_amount: '1', max_amount: '10000' },
    presets: ['10'],
    bonus: [],
    order_ttl_minutes: 120,
  },
  invite: { inviter_reward: 1_000_000, invitee_reward: 0, first_topup_percent: '0' },
  display_currency: 'USD',
  display_rate: '7.3',
  ip_rpm: 0,
} as unknown as Settings;

describe('payment settings form', () => {
  it('sends nothing when nothing changed', () => {
    expect(toPaymentBody(toPaymentForm(stored), stored)).toEqual({});
  });

  it('sends the masked secrets back as they came, with the edited fields', () => {
    const form = toPaymentForm(stored);
    form.payment.epay.enabled = true;
    form.payment.epay.gateway_url = ' https://pay.example/ ';
    form.payment.epay.currency = 'cny';
    form.payment.presets = ['10', ' 50 ', ''];
    form.payment.bonus = [{ min_amount: '100', percent: '5' }, { min_amount: '', percent: '' }];
    const body = toPaymentBody(form, stored);
    expect(Object.keys(body)).toEqual(['payment']);
    expect(body.payment?.epay).toMatchObject({ enabled: true, gateway_url: 'https://pay.example/', key: 'ab****yz', currency: 'CNY' });
    expect(body.payment?.stripe.webhook_secret).toBe('wh****12');
    expect(body.payment?.presets).toEqual(['10', '50']);
    expect(body.payment?.bonus).toEqual([{ min_amount: '100', percent: '5' }]);
  });

  it('takes invite rewards in dollars and sends units', () => {
    const form = toPaymentForm(stored);
    expect(form.invite.inviter_reward_amount).toBe('1');
    form.invite.invitee_reward_amount = '0.5';
    form.ip_rpm = 600;
    const body = toPaymentBody(form, stored);
    expect(body.invite).toEqual({ inviter_reward: 1_000_000, invitee_reward: 500_000, first_topup_percent: '0' });
    expect(body.ip_rpm).toBe(600);
    expect(body.payment).toBeUndefined();
  });

  it('finds the field a server error names', () => {
    expect(fieldPath('payment.epay.gateway_url')).toEqual(['payment', 'epay', 'gateway_url']);
    expect(fieldPath('invite.inviter_reward')).toEqual(['invite', 'inviter_reward_amount']);
    expect(fieldPath('display_rate')).toEqual(['display_rate']);
    expect(fieldPath('site_name')).toBeNull();
    expect(fieldPath(undefined)).toBeNull();
  });
});
