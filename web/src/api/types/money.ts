// Money in: top-ups, redemption codes, invites and their settings (docs/API.md).

// ---- money in: top-ups, redemption codes, invites ----

export type PaymentProvider = 'epay' | 'stripe';
export type TopupStatus = 'pending' | 'paid' | 'failed' | 'expired';

export interface BonusTier {
  /** Pay at least this (provider currency, decimal string)… */
  min_amount: string;
  /** …and get this percent extra quota (decimal string). */
  percent: string;
}

/** One enabled provider of GET /api/user/topup/options. */
export interface TopupProviderOption {
  name: PaymentProvider;
  methods: string[];
  currency: string;
  /** Provider currency per 1 USD of quota. */
  rate: string;
  min_amount: string;
  max_amount: string;
}

export interface TopupOptions {
  providers: TopupProviderOption[];
  presets: string[];
  bonus: BonusTier[];
  order_ttl_minutes?: number;
}

export interface TopupOrder {
  order_no: string;
  user_id?: number;
  username?: string;
  provider: PaymentProvider;
  method?: string;
  amount: string;
  currency: string;
  /** Units credited when paid (bonus included). */
  quota: number;
  /** The bonus part of quota. */
  bonus?: number;
  status: TopupStatus;
  trade_no?: string;
  created_at?: string;
  paid_at?: string | null;
  expires_at?: string | null;
  [key: string]: unknown;
}

export interface CreatedTopup extends TopupOrder {
  pay_url: string;
}

export interface RedeemResult {
  quota_added: number;
  quota: number;
}

export type RedemptionStatus = 'unused' | 'used' | 'expired' | 'disabled';

export interface Redemption {
  id: number;
  /** The batch's id (what filters and the export take). */
  batch: string;
  batch_name?: string;
  /** The masked code (the clear code is shown only at creation and in the batch export). */
  hint?: string;
  quota: number;
  status: RedemptionStatus;
  expires_at?: string | null;
  used_by?: number | null;
  used_by_name?: string;
  used_at?: string | null;
  used_ip?: string;
  created_at?: string;
  [key: string]: unknown;
}

export interface RedemptionBatchInput {
  name: string;
  count: number;
  quota: number;
  expires_at?: string;
}

export interface CreatedBatch {
  /** The new batch's id. */
  batch: string;
  name: string;
  count: number;
  quota: number;
  expires_at?: string | null;
  codes: string[];
}

/** One batch of GET /api/admin/redemptions/batches with its counts by state. */
export interface RedemptionBatch {
  batch: string;
  name: string;
  quota: number;
  count: number;
  unused: number;
  used: number;
  expired: number;
  disabled: number;
  expires_at?: string | null;
  created_at?: string;
}

export interface InviteSummary {
  aff_code: string;
  invited: number;
  rewarded_quota: number;
  /** The newest invitees (usernames masked). */
  latest?: { username: string; created_at: string }[];
}

export interface EpaySettings {
  enabled: boolean;
  gateway_url: string;
  pid: string;
  key: string;
  methods: string[];
  currency: string;
  rate: string;
  min_amount: string;
  max_amount: string;
}

export interface StripeSettings {
  enabled: boolean;
  secret_key: string;
  webhook_secret: string;
  currency: string;
  rate: string;
  min_amount: string;
  max_amount: string;
}

export interface PaymentSettings {
  epay: EpaySettings;
  stripe: StripeSettings;
  presets: string[];
  bonus: BonusTier[];
  order_ttl_minutes: number;
}

export interface InviteSettings {
  inviter_reward: number;
  invitee_reward: number;
  first_topup_percent: string;
}
