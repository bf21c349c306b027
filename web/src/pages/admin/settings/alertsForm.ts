import type { AlertSettings, SmtpTls } from '../../../api/types';

/** Events a webhook may subscribe to (service/setting AlertEvents). */
export const ALERT_EVENTS = [
  'channel.opened',
  'channel.auto_disabled',
  'channel.recovered',
  'key.disabled',
  'model.error_rate',
  'balance.low',
  'daily_summary',
] as const;

export const SMTP_TLS: SmtpTls[] = ['none', 'starttls', 'tls'];

/** The alerts part of the settings form: the threshold as a percent, the summary hour with -1 = off. */
export interface AlertsFormValues {
  webhooks: { url: string; secret: string; events: string[] }[];
  smtp: { host: string; port: number | null; tls: SmtpTls; user: string; password: string; from: string; admin_to: string[] };
  cooldown_s: number | null;
  error_rate: { threshold_percent: number | null; window_s: number | null; min_requests: number | null };
  daily_summary_hour_utc: number;
}

export const DEFAULT_ALERTS: AlertSettings = {
  webhooks: [],
  smtp: { host: '', port: 587, tls: 'starttls', user: '', password: '', from: '', admin_to: [] },
  cooldown_s: 600,
  error_rate: { threshold: 0, window_s: 300, min_requests: 20 },
  daily_summary_hour_utc: -1,
};

/** A fraction as a percent without float noise (0.055 → 5.5). */
function toPercent(fraction: number): number {
  return Math.round(fraction * 1e6) / 1e4;
}

export function alertsToForm(a: AlertSettings | undefined): AlertsFormValues {
  const s = { ...DEFAULT_ALERTS, ...a };
  const smtp = { ...DEFAULT_ALERTS.smtp, ...s.smtp };
  const er = { ...DEFAULT_ALERTS.error_rate, ...s.error_rate };
  return {
    webhooks: (s.webhooks ?? []).map((w) => ({ url: w.url ?? '', secret: w.secret ?? '', events: w.events ?? [] })),
    smtp: {
      host: smtp.host ?? '',
      port: smtp.port || null,
      tls: smtp.tls || 'starttls',
      user: smtp.user ?? '',
      password: smtp.password ?? '',
      from: smtp.from ?? '',
      admin_to: smtp.admin_to ?? [],
    },
    cooldown_s: s.cooldown_s ?? 600,
    error_rate: { threshold_percent: toPercent(er.threshold ?? 0), window_s: er.window_s ?? 300, min_requests: er.min_requests ?? 20 },
    daily_summary_hour_utc: s.daily_summary_hour_utc ?? -1,
  };
}

export function formToAlerts(v: AlertsFormValues): AlertSettings {
  return {
    webhooks: (v.webhooks ?? []).map((w) => ({ url: (w.url ?? '').trim(), secret: w.secret ?? '', events: w.events ?? [] })),
    smtp: {
      host: (v.smtp?.host ?? '').trim(),
      port: v.smtp?.port ?? 587,
      tls: v.smtp?.tls ?? 'starttls',
      user: v.smtp?.user ?? '',
      password: v.smtp?.password ?? '',
      from: (v.smtp?.from ?? '').trim(),
      admin_to: (v.smtp?.admin_to ?? []).map((x) => x.trim()).filter(Boolean),
    },
    cooldown_s: v.cooldown_s ?? 600,
    error_rate: {
      threshold: Math.round((v.error_rate?.threshold_percent ?? 0) * 1e4) / 1e6,
      window_s: v.error_rate?.window_s ?? 300,
      min_requests: v.error_rate?.min_requests ?? 20,
    },
    daily_summary_hour_utc: v.daily_summary_hour_utc ?? -1,
  };
}

/** The stored alerts in the shape the form sends back, so an untouched form compares equal. */
export function normalizeAlerts(a: AlertSettings | undefined): AlertSettings {
  return formToAlerts(alertsToForm(a));
}
