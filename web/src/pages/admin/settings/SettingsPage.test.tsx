import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../../test/render';
import SettingsPage from './SettingsPage';

const settings: Record<string, unknown> = {
  site_name: 'Tollgate',
  notice: '',
  registration_open: true,
  default_group: 'default',
  new_user_quota: 0,
  unknown_model_policy: 'refuse',
  default_price: { input: '0', output: '0', cache_read: '0', cache_write: '0', per_call: '0' },
  estimate_output_tokens: 4096,
  retry_budget: 3,
  channel_test_interval: 300,
  error_rules: [],
  request_deadline: 600,
  first_byte_budget: 300,
  recovery_ramp: 60,
  signup_rate_limit: 10,
  show_channel_to_users: false,
};

let fetchMock: ReturnType<typeof vi.fn>;
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status });

beforeEach(() => {
  fetchMock = vi.fn(async (url: string, init?: RequestInit) => {
    if (url.startsWith('/api/admin/settings') && init?.method === 'PUT') {
      return json({ ...settings, ...JSON.parse(init.body as string) });
    }
    if (url.startsWith('/api/admin/settings')) return json(settings);
    if (url.startsWith('/api/admin/groups')) return json([{ name: 'default', description: '', ratio: '1', selectable: true }]);
    return json([]);
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => {
  vi.unstubAllGlobals();
  delete settings.alerts;
});

describe('SettingsPage', () => {
  it('edits the deadline, recovery, sign-up and privacy settings with their own labelled fields', async () => {
    renderWithProviders(<SettingsPage />);
    const deadline = await screen.findByLabelText('Request deadline');
    await waitFor(() => expect(deadline).toHaveValue('600'));
    expect(screen.getByLabelText('First-byte budget')).toHaveValue('300');
    expect(screen.getByLabelText('Recovery ramp')).toHaveValue('60');
    expect(screen.getByLabelText('Sign-ups per IP')).toHaveValue('10');
    expect(screen.getByLabelText('Show channel names to users')).not.toBeChecked();
    expect(screen.getByText(/10 % of its weight/)).toBeInTheDocument();
    // They are no longer listed among the unlabelled "other" settings.
    expect(screen.queryByText('request_deadline')).not.toBeInTheDocument();

    fireEvent.change(deadline, { target: { value: '120' } });
    fireEvent.blur(deadline);
    fireEvent.click(screen.getByLabelText('Show channel names to users'));
    fireEvent.click(screen.getAllByRole('button', { name: /save/i })[0]);

    await waitFor(() => expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'PUT')).toBe(true));
    const put = fetchMock.mock.calls.find(([, init]) => init?.method === 'PUT')!;
    // Only what changed is sent.
    expect(JSON.parse(put[1].body)).toEqual({ request_deadline: 120, show_channel_to_users: true });
  }, 60_000);

  it('refuses an empty recovery ramp before sending', async () => {
    renderWithProviders(<SettingsPage />);
    const ramp = await screen.findByLabelText('Recovery ramp');
    await waitFor(() => expect(ramp).toHaveValue('60'));
    fireEvent.change(ramp, { target: { value: '' } });
    fireEvent.blur(ramp);
    fireEvent.click(screen.getAllByRole('button', { name: /save/i })[0]);
    expect(await screen.findByText('Required')).toBeInTheDocument();
    expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'PUT')).toBe(false);
  }, 60_000);

  it('saves a webhook and the alert thresholds, keeping the masked SMTP password', async () => {
    settings.alerts = {
      webhooks: [],
      smtp: { host: 'smtp.example.com', port: 587, tls: 'starttls', user: '', password: 'pa****rd', from: 'a@example.com', admin_to: null },
      cooldown_s: 600,
      error_rate: { threshold: 0, window_s: 300, min_requests: 20 },
      daily_summary_hour_utc: -1,
    };
    renderWithProviders(<SettingsPage />);
    const retention = await screen.findByLabelText('Keep usage logs for');
    await waitFor(() => expect(retention).toHaveValue('0'));
    fireEvent.change(retention, { target: { value: '30' } });
    fireEvent.blur(retention);
    fireEvent.click(screen.getByTestId('add-webhook'));
    fireEvent.change(await screen.findByLabelText('Webhook URL'), { target: { value: 'https://hooks.example.com/a' } });
    fireEvent.change(screen.getByLabelText('Signing secret'), { target: { value: 'secret-0123456789abcdef' } });
    const threshold = screen.getByTestId('alert-threshold');
    fireEvent.change(threshold, { target: { value: '25' } });
    fireEvent.blur(threshold);
    fireEvent.click(screen.getAllByRole('button', { name: /save/i })[0]);

    await waitFor(() => expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'PUT')).toBe(true));
    const put = fetchMock.mock.calls.find(([, init]) => init?.method === 'PUT')!;
    const body = JSON.parse(put[1].body);
    expect(Object.keys(body).sort()).toEqual(['alerts', 'log_retention_days']);
    expect(body.log_retention_days).toBe(30);
    expect(body.alerts.webhooks).toEqual([{ url: 'https://hooks.example.com/a', secret: 'secret-0123456789abcdef', events: [] }]);
    expect(body.alerts.error_rate.threshold).toBe(0.25);
    expect(body.alerts.smtp.password).toBe('pa****rd');
  }, 60_000);
});
