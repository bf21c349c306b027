import { describe, expect, it } from 'vitest';
import { alertsToForm, DEFAULT_ALERTS, formToAlerts, normalizeAlerts } from './alertsForm';

describe('alerts form', () => {
  it('shows the threshold as a percent and sends it back as a fraction', () => {
    const stored = { ...DEFAULT_ALERTS, error_rate: { threshold: 0.055, window_s: 300, min_requests: 20 } };
    const form = alertsToForm(stored);
    expect(form.error_rate.threshold_percent).toBe(5.5);
    expect(formToAlerts({ ...form, error_rate: { ...form.error_rate, threshold_percent: 12.5 } }).error_rate.threshold).toBe(0.125);
  });

  it('keeps masked secrets as they came, trims addresses and round-trips untouched settings', () => {
    const stored = {
      ...DEFAULT_ALERTS,
      webhooks: [{ url: 'https://hooks.example.com/a', secret: 'abcd****wxyz', events: ['channel.opened'] }],
      smtp: { ...DEFAULT_ALERTS.smtp, host: 'smtp.example.com', password: 'pa****rd', from: 'a@example.com', admin_to: null },
      daily_summary_hour_utc: 8,
    };
    const back = formToAlerts(alertsToForm(stored));
    expect(back.webhooks[0].secret).toBe('abcd****wxyz');
    expect(back.smtp.password).toBe('pa****rd');
    expect(back.smtp.admin_to).toEqual([]);
    expect(back.daily_summary_hour_utc).toBe(8);
    expect(normalizeAlerts(stored)).toEqual(back);
    const edited = alertsToForm(stored);
    edited.smtp.admin_to = [' ops@example.com ', ''];
    expect(formToAlerts(edited).smtp.admin_to).toEqual(['ops@example.com']);
  });

  it('fills defaults when the server has no alerts yet', () => {
    expect(normalizeAlerts(undefined)).toEqual({ ...DEFAULT_ALERTS, smtp: { ...DEFAULT_ALERTS.smtp, admin_to: [] } });
  });
});
