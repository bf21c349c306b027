// Shapes of the console API, as written in docs/API.md.
// Split by domain in ./types/; everything is re-exported here, so imports stay `from './types'`.
export * from './types/groups';
export * from './types/business';
export * from './types/money';
import type { AlertSettings } from './types/business';
import type { InviteSettings, PaymentSettings } from './types/money';
import type { OAuthProviderInfo, OAuthSettings } from './types/oauth';

export type Role = 'user' | 'admin' | 'root';
export type EnabledStatus = 'enabled' | 'disabled';

export interface User {
  id: number;
  username: string;
  email?: string;
  role: Role;
  group: string;
  status: EnabledStatus | 'unverified';
  quota: number;
  used_quota: number;
  request_count: number;
  created_at: string;
  /** Requests / tokens per minute an admin allows this user (0 = no limit). */
  rpm?: number;
  tpm?: number;
  aff_code?: string | null;
  inviter_id?: number | null;
  /** The user's price tier ("" or absent = none, ratio 1). */
  tier?: string;
  /** E-mail me once when my balance falls below this many units (0 = off). */
  balance_alert?: number;
  /** Language of the user's e-mails ("en", "zh-CN"; "" = en). */
  language?: string;
  /** Two-factor sign-in is on. */
  totp_enabled?: boolean;
  /** The user's routing preferences (PATCH /api/user/routing). */
  routing?: import('./routing').RoutePrefs;
}

export interface Page<T> {
  items: T[];
  total: number;
}

export interface PageQuery {
  page?: number;
  size?: number;
  q?: string;
}

export interface LoginResponse {
  token: string;
  expires_at?: string;
  user: User;
}

export interface SiteStatus {
  version: string;
  registration_open: boolean;
  store: string;
  cache: string;
  site_name: string;
  notice: string;
  /** How money is shown: dollars, yuan at display_rate, or raw quota units. */
  display_currency?: 'USD' | 'CNY' | 'units';
  /** CNY per 1 USD (decimal string). */
  display_rate?: string;
  /** Enabled external sign-in providers (GitHub, OIDC), in the order the login page shows them. */
  oauth_providers?: OAuthProviderInfo[];
  /** Sign-up needs a verified e-mail (a code is sent). */
  email_verification?: boolean;
  /** "Forgot password" sends a reset link. */
  password_reset?: boolean;
  /** The captcha widget to show, or null when none is configured. */
  captcha?: CaptchaStatus | null;
  /** The site's public base URL (setting/env), for connection snippets; the page's origin when absent. */
  public_base_url?: string;
}

export interface CaptchaStatus {
  provider: 'turnstile' | 'hcaptcha';
  site_key: string;
  /** A sign-in needs the captcha once the username has this many recent failures (0: always). */
  login_after_failures: number;
}

/** Captcha settings (secret shown masked). */
export interface CaptchaSettings {
  provider: '' | 'turnstile' | 'hcaptcha';
  site_key: string;
  secret: string;
  verify_url: string;
  login_after_failures: number;
}

export interface Token {
  id: number;
  user_id: number;
  name: string;
  key: string;
  status: EnabledStatus;
  /** An admin disabled the key: only an admin can enable it again. */
  admin_disabled: boolean;
  /** The key's group is one its owner may no longer use: the relay refuses the key (group_revoked). */
  group_revoked: boolean;
  remain_quota: number;
  unlimited: boolean;
  used_quota: number;
  expires_at: string | null;
  models: string[];
  allowed_ips: string[];
  group: string;
  /** Groups tried in order when every route of `group` is unavailable (≤ 5). */
  fallback_groups?: string[];
  rpm: number;
  concurrency: number;
  /** Spend caps in units per UTC day / month (0 = none) and tokens per minute (0 = none). */
  daily_budget?: number;
  monthly_budget?: number;
  tpm?: number;
  /** Spent today / this month (UTC), units; read-only. */
  spent_today?: number;
  spent_month?: number;
  created_at: string;
  last_used_at: string | null;
  /** The key's routing preferences (RoutePrefs). */
  routing?: import('./routing').RoutePrefs;
}

export interface TokenInput {
  name?: string;
  remain_quota?: number;
  unlimited?: boolean;
  expires_at?: string | null;
  models?: string[];
  allowed_ips?: string[];
  group?: string;
  fallback_groups?: string[];
  rpm?: number;
  concurrency?: number;
  daily_budget?: number;
  monthly_budget?: number;
  tpm?: number;
  status?: EnabledStatus;
  routing?: import('./routing').RoutePrefs;
}

export interface PriceRow {
  model: string;
  input: string;
  output: string;
  cache_read: string;
  cache_write: string;
  per_call: string;
  /** USD per image; per_image_by_size overrides it per "1024x1024" or "1024x1024/hd". */
  per_image?: string;
  per_image_by_size?: Record<string, string>;
  /** USD per minute of audio in. */
  per_audio_minute?: string;
  /** USD per 1M characters of speech input. */
  per_1m_chars?: string;
  /** USD per 1,000 rerank searches. */
  per_1k_searches?: string;
  /** Token prices for prompts longer than above_prompt_tokens. */
  tiers?: PriceTierRow[];
}

/** A prompt-length tier: above this many prompt tokens, these input and output prices (USD per 1M) apply. */
export interface PriceTierRow {
  above_prompt_tokens: number;
  input: string;
  output: string;
}

/** A price of GET /api/pricing: what the caller pays (list price × group ratio × tier ratio). */
export interface EffectivePrice extends PriceRow {
  group_ratio: string;
  group?: string;
  tier?: string;
  tier_ratio?: string;
  /** group_ratio × tier_ratio. */
  ratio?: string;
}

/** POST /api/admin/pricing/import: what the file holds and what saving it does. */
export interface PricingImportResult {
  /** "new-api" (ratio file) or "tollgate" (our rows). */
  format: string;
  mode: 'merge' | 'replace';
  /** Rows in the file. */
  imported: number;
  /** Of those, models not priced before / priced differently before. */
  added: number;
  changed: number;
  /** Rows in the table after saving. */
  rows: number;
  dry_run: boolean;
  /** The whole table after saving (dry run only). */
  prices?: PriceRow[];
}

export type ChannelType = 'openai' | 'openai-compatible' | 'anthropic' | 'gemini' | 'azure' | 'vertex' | 'bedrock';
/** Type-specific channel settings (credentials are the channel's keys, never here). */
export interface ChannelConfig {
  /** An OpenAI-compatible vendor preset (deepseek, openrouter, ...). */
  preset?: string;
  azure?: { api_version: string; deployments?: Record<string, string> };
  vertex?: { project: string; region: string; publishers?: Record<string, string> };
  bedrock?: { region: string; model_ids?: Record<string, string> };
}
/** An upstream's price: decimal USD per 1M tokens by kind, or per call (which replaces the token prices). */
export interface CostPrice {
  input: string;
  output: string;
  cache_read: string;
  cache_write: string;
  per_call: string;
}

/** Fleet-wide traffic of a channel (× model) over a window, every node merged (GET /api/admin/fleet). */
export interface FleetStats {
  channel_id: number;
  model?: string;
  requests: number;
  attempts: number;
  successes: number;
  /** successes / attempts; 0 with no traffic: read attempts first. */
  success_rate: number;
  classes: Record<string, number> | null;
  latency_avg_ms: number;
  latency_p50_ms: number;
  latency_p95_ms: number;
  first_byte_p50_ms: number;
  first_byte_p95_ms: number;
  prompt_tokens: number;
  completion_tokens: number;
}

export type FleetWindow = '5m' | '1h' | '24h';

export type ChannelStatus = 'enabled' | 'disabled' | 'auto_disabled';
export type HealthState = 'closed' | 'open' | 'half_open' | 'disabled';

export interface ChannelTimeouts {
  connect_ms: number;
  first_byte_ms: number;
  idle_ms: number;
  total_ms: number;
}

export interface Channel {
  id: number;
  type: ChannelType;
  name: string;
  base_url: string;
  keys: string[];
  key_strategy: 'random' | 'round_robin';
  models: string[];
  model_mapping: Record<string, string>;
  groups: string[];
  priority: number;
  weight: number;
  status: ChannelStatus;
  header_override: Record<string, string>;
  header_passthrough?: string[];
  body_override: { set?: Record<string, unknown>; delete?: string[] };
  status_code_mapping: Record<string, number>;
  test_model: string;
  timeouts: ChannelTimeouts;
  tag: string;
  /** Most concurrent upstream requests on the channel / on each of its keys (0 = no cap). */
  max_concurrency?: number;
  key_max_concurrency?: number;
  /** Upstream cost: a price for every model, or a multiple of the sell price (null = not set). */
  cost_price?: CostPrice | null;
  cost_ratio?: string | null;
  /** Per-model upstream prices that override either. */
  cost_prices?: Record<string, CostPrice>;
  config?: ChannelConfig;
  created_at: string;
  health?: {
    state: HealthState;
    success_rate?: number;
    latency_ms?: number;
    /** Calls (tests included) this node saw in the last hour; 0: rate and latency mean nothing. */
    requests_1h?: number;
    /** The channel's latest test (any node). */
    last_test?: { ok: boolean; latency_ms: number; error_class?: string; at: string };
    fleet_1h?: FleetStats;
  };
}

export type ChannelInput = Partial<Omit<Channel, 'id' | 'created_at' | 'health' | 'cost_price' | 'cost_ratio'>> & {
  /** All "" = none. */
  cost_price?: CostPrice;
  /** "" = none. */
  cost_ratio?: string;
};

export interface ChannelTestResult {
  /** The tested channel (the backend answers channel_id; id kept for the contract's wording). */
  channel_id?: number;
  id?: number;
  model?: string;
  ok: boolean;
  status: number;
  latency_ms: number;
  first_byte_ms: number;
  error_class: string;
  error: string;
  key_index: number;
}

export interface ChannelTestJob {
  total: number;
  done: number;
  results: ChannelTestResult[];
}

export interface HealthMetrics {
  counts?: Record<string, { total: number; by_class: Record<string, number> }>;
  success_rate?: number;
  latency_ewma_ms?: number;
  first_byte_ewma_ms?: number;
  latency_p50_ms?: number;
  latency_p95_ms?: number;
  latency_p99_ms?: number;
  first_byte_p50_ms?: number;
  first_byte_p95_ms?: number;
  first_byte_p99_ms?: number;
  active?: number;
  rate_limit_remaining?: number;
  [key: string]: unknown;
}

export type BreakerAction = 'open' | 'close' | 'half_open' | 'reset';

export interface ChannelHealth {
  state: HealthState;
  /** An admin forced this state; it holds until reset. */
  forced?: boolean;
  status?: ChannelStatus;
  trips?: number;
  cooldown_until?: string | null;
  unsupported_models?: string[];
  keys: {
    index: number;
    masked?: string;
    state: string;
    forced?: boolean;
    cooldown_until?: string | null;
    metrics?: HealthMetrics;
  }[];
  metrics: HealthMetrics;
  /** Every node's traffic on the channel over the last 5 minutes / hour / day. */
  fleet?: Partial<Record<FleetWindow, FleetStats>>;
}

export interface LogAttempt {
  channel_id: number;
  key_index: number;
  class: string;
  status?: number;
  latency_ms: number;
}

/**
 * One step of a routing decision: a candidate skipped (with the reason), an attempt that failed (reason = its
 * failure class), or the one that answered.
 */
export interface RoutingCandidate {
  group?: string;
  route?: string;
  channel_id: number;
  /** Absent when a whole channel was skipped before a key was drawn. */
  key_index?: number;
  skipped?: boolean;
  reason?: string;
}

/** How the router chose the upstream of a request (admin view only). */
export interface RoutingDecision {
  policy: string;
  /** hit, moved, returned (to the primary route) or miss, optionally with the level: "hit:session". */
  sticky?: string;
  considered: RoutingCandidate[] | null;
  chosen?: { group?: string; route?: string; channel_id: number; key_index: number } | null;
  /** More steps happened than the log keeps. */
  truncated?: boolean;
}

export interface LogPrice {
  input: string;
  output: string;
  cache_read: string;
  cache_write: string;
  per_call: string;
  /** What was billed beyond tokens, with its unit price. */
  images?: number;
  image_size?: string;
  per_image?: string;
  audio_seconds?: string;
  per_audio_minute?: string;
  chars?: number;
  per_1m_chars?: string;
  searches?: number;
  per_1k_searches?: string;
  /** The prompt-length tier whose token prices applied. */
  tier_above_prompt_tokens?: number;
}

/**
 * One usage log. The user's own view (GET /api/logs) carries a gateway-written `error` and no internal
 * fields; the optional ones below come only from the admin view (or `channel_name` when the site shows
 * channel names to users).
 */
export interface UsageLog {
  id: number;
  /** A channel test run by an admin (user = that admin, no key), not a customer's request. */
  is_test?: boolean;
  /** The gateway's own id (X-Tollgate-Request-Id). */
  request_id: string;
  /** The caller's X-Request-Id, if it sent one. */
  client_request_id: string;
  created_at: string;
  user_id: number;
  username: string;
  token_id: number;
  token_name: string;
  model: string;
  endpoint?: string;
  stream: boolean;
  prompt_tokens: number;
  completion_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost: number;
  /** What the serving upstream charged for this call, in units (admin view only). */
  upstream_cost?: number;
  price: LogPrice;
  group_ratio: string;
  status: 'success' | 'error';
  http_status: number;
  error_class: string;
  error_code?: string;
  error: string;
  elapsed_ms: number;
  first_byte_ms: number;
  client_ip: string;
  channel_name?: string;
  channel_id?: number;
  upstream_model?: string;
  client_protocol?: string;
  upstream_protocol?: string;
  attempts?: LogAttempt[] | null;
  error_shown?: boolean;
  /** The logical group that served the request and its route. */
  group?: string;
  route?: string;
  decision?: RoutingDecision | null;
}

export interface LogFilter {
  from?: string;
  to?: string;
  model?: string;
  token_id?: number;
  status?: 'success' | 'error';
  request_id?: string;
  client_request_id?: string;
  user_id?: number;
  channel_id?: number;
  /** Which rows: relayed requests (the default), channel tests, or both. */
  type?: LogKind;
}

/** Relayed requests ("usage"), channel tests ("test") or both ("all"). */
export type LogKind = 'usage' | 'test' | 'all';

/** GET /api/logs/totals: sums over every row a filter lists. */
export interface LogTotals {
  requests: number;
  cost: number;
  prompt_tokens: number;
  completion_tokens: number;
}

export interface LogPage {
  items: UsageLog[];
  /** The cursor of the next page; null on the last page. */
  next_cursor: number | null;
}

export interface StatsRow {
  requests: number;
  cost: number;
  prompt_tokens: number;
  completion_tokens: number;
}

export interface LogStats {
  totals: StatsRow;
  days: (StatsRow & { date: string })[];
  models: (StatsRow & { model: string })[];
}

export interface Settings {
  site_name: string;
  notice: string;
  registration_open: boolean;
  default_group: string;
  new_user_quota: number;
  unknown_model_policy: 'refuse' | 'default';
  default_price: PriceRow;
  estimate_output_tokens: number;
  request_deadline?: number;
  first_byte_budget?: number;
  recovery_ramp?: number;
  signup_rate_limit?: number;
  show_channel_to_users?: boolean;
  payment?: PaymentSettings;
  invite?: InviteSettings;
  display_currency?: 'USD' | 'CNY' | 'units';
  display_rate?: string;
  ip_rpm?: number;
  /** Usage log rows older than this many days are deleted (0 = keep forever). */
  log_retention_days?: number;
  alerts?: AlertSettings;
  oauth?: OAuthSettings;
  email_verification?: boolean;
  password_reset?: boolean;
  captcha?: CaptchaSettings;
  /** Admins and root without two-factor sign-in are held to enrolment on the admin API. */
  require_2fa_admins?: boolean;
  [key: string]: unknown;
}

export interface AuditEntry {
  id: number;
  actor_id: number;
  actor_name: string;
  action: string;
  target: string;
  detail: string;
  ip: string;
  created_at: string;
}
