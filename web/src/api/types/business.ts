// Alerts and the business reports (docs/API.md).

// ---- alerts ----

export interface AlertWebhook {
  url: string;
  /** 16-256 characters; comes back masked. */
  secret: string;
  /** Subscribed events (empty = all). */
  events: string[];
}

export type SmtpTls = 'none' | 'starttls' | 'tls';

export interface AlertSettings {
  webhooks: AlertWebhook[];
  smtp: {
    host: string;
    port: number;
    tls: SmtpTls;
    user: string;
    /** Comes back masked. */
    password: string;
    from: string;
    /** Who gets the operator events and the daily summary. */
    admin_to: string[] | null;
  };
  /** One alert per event per this many seconds. */
  cooldown_s: number;
  /** A model's failed share over window_s above threshold (0 = off) with at least min_requests requests. */
  error_rate: { threshold: number; window_s: number; min_requests: number };
  /** 0-23, or -1 = off. */
  daily_summary_hour_utc: number;
}

/** One alert delivery (GET /api/admin/alerts). */
export interface AlertLog {
  id: number;
  event: string;
  event_key: string;
  target: string;
  /** webhook or email. */
  channel: string;
  /** sent, failed or skipped. */
  status: string;
  attempts: number;
  error: string;
  subject: string;
  created_at: string;
}

export interface AlertLogPage {
  items: AlertLog[];
  next_cursor: number | null;
}

// ---- business stats ----

/** One group's numbers of GET /api/admin/stats/…; money in units, profit = revenue − upstream_cost. */
export interface StatsFigures {
  requests: number;
  /** Successful requests (success_rate = successes / requests). */
  successes: number;
  /** 0 … 1. */
  success_rate: number;
  p50_ms: number;
  p95_ms: number;
  first_byte_p50_ms: number;
  prompt_tokens: number;
  completion_tokens: number;
  revenue: number;
  upstream_cost: number;
  profit: number;
}

export interface ChannelStats extends StatsFigures {
  channel_id: number;
  name: string;
}
export interface ModelStats extends StatsFigures {
  model: string;
}
export interface DayStats extends StatsFigures {
  /** UTC day, YYYY-MM-DD. */
  date: string;
}
export interface UserStats extends StatsFigures {
  user_id: number;
  username: string;
}

export interface StatsReport<T> {
  from: string;
  to: string;
  items: T[];
}

/** GET /api/admin/stats/overview: users and keys with traffic, failed upstream attempts by class. */
export interface StatsOverview {
  from: string;
  to: string;
  active_users: number;
  active_keys: number;
  errors: { class: string; count: number }[];
}
