import type { BonusTier, InviteSettings, PaymentSettings, Settings } from '../../../api/types';
import { unitsToUsdText, usdToUnits } from '../../../lib/money';

/** The payment page's form: the settings with rewards typed in the display currency. */
export interface PaymentForm {
  payment: PaymentSettings;
  invite: { inviter_reward_amount: string; invitee_reward_amount: string; first_topup_percent: string };
  display_currency: 'USD' | 'CNY' | 'units';
  display_rate: string;
  ip_rpm: number;
}

const EMPTY_EPAY: PaymentSettings['epay'] = {
  enabled: false,
  gateway_url: '',
  pid: '',
  key: '',
  methods: [],
  currency: 'CNY',
  rate: '7.3',
  min_amount: '1',
  max_amount: '10000',
};
const EMPTY_STRIPE: PaymentSettings['stripe'] = {
  enabled: false,
  secret_key: '',
  webhook_secret: '',
  currency: 'USD',
  rate: '1',
  min_amount: '1',
  max_amount: '10000',
};

export function toPaymentForm(s: Settings, toText: (units: number) => string = unitsToUsdText): PaymentForm {
  const p = s.payment;
  return {
    payment: {
      epay: { ...EMPTY_EPAY, ...p?.epay, methods: p?.epay?.methods ?? [] },
      stripe: { ...EMPTY_STRIPE, ...p?.stripe },
      presets: p?.presets ?? [],
      bonus: p?.bonus ?? [],
      order_ttl_minutes: p?.order_ttl_minutes ?? 120,
    },
    invite: {
      inviter_reward_amount: toText(s.invite?.inviter_reward ?? 0),
      invitee_reward_amount: toText(s.invite?.invitee_reward ?? 0),
      first_topup_percent: s.invite?.first_topup_percent ?? '0',
    },
    display_currency: s.display_currency ?? 'USD',
    display_rate: s.display_rate ?? '7.3',
    ip_rpm: s.ip_rpm ?? 0,
  };
}

const trim = (v: string | undefined) => (v ?? '').trim();

/**
 * Form → the settings PUT body, holding only the top-level settings that changed (so the audit names them).
 * Masked secrets are sent back as they came: the server keeps the stored value for them.
 */
export function toPaymentBody(
  values: PaymentForm,
  current: Settings,
  toUnits: (text: string) => number | null = usdToUnits,
): Partial<Settings> {
  const p = values.payment;
  const bonus: BonusTier[] = (p.bonus ?? [])
    .filter((b) => b && trim(b.min_amount) && trim(b.percent))
    .map((b) => ({ min_amount: trim(b.min_amount), percent: trim(b.percent) }));
  const invite: InviteSettings = {
    inviter_reward: toUnits(values.invite.inviter_reward_amount || '0') ?? 0,
    invitee_reward: toUnits(values.invite.invitee_reward_amount || '0') ?? 0,
    first_topup_percent: trim(values.invite.first_topup_percent) || '0',
  };
  const body: Partial<Settings> = {
    payment: {
      ...current.payment,
      epay: {
        ...current.payment?.epay,
        enabled: !!p.epay.enabled,
        gateway_url: trim(p.epay.gateway_url),
        pid: trim(p.epay.pid),
        key: trim(p.epay.key),
        methods: (p.epay.methods ?? []).map((m) => m.trim()).filter(Boolean),
        currency: trim(p.epay.currency).toUpperCase(),
        rate: trim(p.epay.rate),
        min_amount: trim(p.epay.min_amount),
        max_amount: trim(p.epay.max_amount),
      },
      stripe: {
        ...current.payment?.stripe,
        enabled: !!p.stripe.enabled,
        secret_key: trim(p.stripe.secret_key),
        webhook_secret: trim(p.stripe.webhook_secret),
        currency: trim(p.stripe.currency).toUpperCase(),
        rate: trim(p.stripe.rate),
        min_amount: trim(p.stripe.min_amount),
        max_amount: trim(p.stripe.max_amount),
      },
      presets: (p.presets ?? []).map((x) => x.trim()).filter(Boolean),
      bonus,
      order_ttl_minutes: p.order_ttl_minutes ?? 120,
    },
    invite: { ...current.invite, ...invite },
    display_currency: values.display_currency,
    display_rate: trim(values.display_rate) || (current.display_rate ?? '7.3'),
    ip_rpm: values.ip_rpm ?? 0,
  };
  const cur: Record<string, unknown> = current;
  return Object.fromEntries(Object.entries(body).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(cur[k]))) as Partial<Settings>;
}

/**
 * The form field a server error names ("payment.epay.gateway_url", "invite.inviter_reward"), as a name path;
 * null when the page has no such field.
 */
export function fieldPath(field: string | undefined): (string | number)[] | null {
  if (!field) return null;
  const path = field.split('.');
  if (path[0] === 'invite' && (path[1] === 'inviter_reward' || path[1] === 'invitee_reward')) return ['invite', `${path[1]}_amount`];
  if (path[0] === 'payment' && path[1] === 'bonus') return ['payment', 'bonus'];
  if (['payment', 'invite', 'display_currency', 'display_rate', 'ip_rpm'].includes(path[0])) return path;
  return null;
}
