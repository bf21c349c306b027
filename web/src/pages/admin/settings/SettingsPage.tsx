import { App, Button, Card, Col, Form, Input, InputNumber, Row, Select, Skeleton, Switch } from 'antd';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useGroups } from '../../../api/groups';
import { useSaveSettings, useSettings } from '../../../api/settings';
import type { PriceRow, Settings } from '../../../api/types';
import { PageHeader } from '../../../components/PageHeader';
import { QueryError } from '../../../components/QueryError';
import { useFormat } from '../../../lib/useFormat';
import { applyServerError, decimalRules } from '../../../lib/validation';
import { AlertsCard } from './AlertsCard';
import { OAuthProvidersCard } from './OAuthProvidersCard';
import { normalizeCaptcha, SigninCard, type SigninFormValues } from './SigninCard';
import { alertsToForm, formToAlerts, normalizeAlerts, type AlertsFormValues } from './alertsForm';

/** Whole-number settings with a dedicated field: name, bounds (the server's), unit shown after the value. */
const NUMBER_FIELDS = [
  { name: 'request_deadline', min: 1, max: 86400, unit: 'seconds' },
  { name: 'first_byte_budget', min: 1, max: 86400, unit: 'seconds' },
  { name: 'recovery_ramp', min: 0, max: 3600, unit: 'seconds' },
  { name: 'signup_rate_limit', min: 0, max: 100000, unit: 'perHour' },
  { name: 'log_retention_days', min: 0, max: 36500, unit: 'days' },
] as const;
type NumberField = (typeof NUMBER_FIELDS)[number]['name'];

const KNOWN_SETTINGS = new Set([
  'site_name',
  'notice',
  'registration_open',
  'default_group',
  'new_user_quota',
  'unknown_model_policy',
  'default_price',
  'estimate_output_tokens',
  ...NUMBER_FIELDS.map((f) => f.name),
  'show_channel_to_users',
  'require_2fa_admins',
  // Edited on the payment settings page.
  'payment',
  'invite',
  'display_currency',
  'display_rate',
  'ip_rpm',
  'alerts',
  // Saved by its own card (OAuthProvidersCard).
  'oauth',
  // The "Sign-in and sign-up" section.
  'email_verification',
  'password_reset',
  'captcha',
]);

/** Settings the server has that this page has no dedicated field for (numbers, text, switches). */
function extraSettings(s: Settings | undefined): [string, string | number | boolean][] {
  return Object.entries(s ?? {}).filter(
    (entry): entry is [string, string | number | boolean] =>
      !KNOWN_SETTINGS.has(entry[0]) && ['string', 'number', 'boolean'].includes(typeof entry[1]),
  );
}

interface SettingsForm extends SigninFormValues {
  extra?: Record<string, string | number | boolean>;
  site_name: string;
  notice: string;
  registration_open: boolean;
  default_group: string;
  new_user_quota_amount: string;
  unknown_model_policy: 'refuse' | 'default';
  default_price: Omit<PriceRow, 'model'>;
  estimate_output_tokens: number;
  request_deadline: number;
  first_byte_budget: number;
  recovery_ramp: number;
  signup_rate_limit: number;
  show_channel_to_users: boolean;
  require_2fa_admins: boolean;
  log_retention_days: number;
  alerts: AlertsFormValues;
}

const PRICE_FIELDS = ['input', 'output', 'cache_read', 'cache_write', 'per_call'] as const;
const ZERO_PRICE = { input: '0', output: '0', cache_read: '0', cache_write: '0', per_call: '0' };

function toForm(s: Settings, toText: (units: number) => string): SettingsForm {
  return {
    site_name: s.site_name ?? '',
    notice: s.notice ?? '',
    registration_open: !!s.registration_open,
    default_group: s.default_group ?? 'default',
    new_user_quota_amount: toText(s.new_user_quota ?? 0),
    unknown_model_policy: s.unknown_model_policy ?? 'refuse',
    default_price: { ...ZERO_PRICE, ...(s.default_price as Partial<PriceRow> | undefined) },
    estimate_output_tokens: s.estimate_output_tokens ?? 0,
    request_deadline: s.request_deadline ?? 600,
    first_byte_budget: s.first_byte_budget ?? 300,
    recovery_ramp: s.recovery_ramp ?? 60,
    signup_rate_limit: s.signup_rate_limit ?? 10,
    show_channel_to_users: !!s.show_channel_to_users,
    require_2fa_admins: !!s.require_2fa_admins,
    log_retention_days: s.log_retention_days ?? 0,
    alerts: alertsToForm(s.alerts),
    email_verification: !!s.email_verification,
    password_reset: !!s.password_reset,
    captcha: normalizeCaptcha(s.captcha),
    extra: Object.fromEntries(extraSettings(s)),
  };
}

export default function SettingsPage() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const { moneyInput } = useFormat();
  const settings = useSettings();
  const groups = useGroups();
  const save = useSaveSettings();
  const [form] = Form.useForm<SettingsForm>();
  const policy = Form.useWatch('unknown_model_policy', form);
  // Test sends use the saved settings: say so while the alerts section has unsaved edits.
  const [alertsDirty, setAlertsDirty] = useState(false);

  useEffect(() => {
    if (settings.data) {
      form.setFieldsValue(toForm(settings.data, moneyInput.toText));
      setAlertsDirty(false);
    }
    // moneyInput changes identity every render; refill only when the settings change.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [settings.data, form]);

  const numberItem = (name: NumberField) => {
    const f = NUMBER_FIELDS.find((x) => x.name === name)!;
    return (
      <Form.Item
        key={name}
        name={name}
        label={t(`settings.${name}`)}
        extra={t(`settings.${name}_hint`)}
        rules={[
          { required: true, message: t('validation.required') },
          { type: 'number', min: f.min, max: f.max, message: t('settings.range', { min: f.min, max: f.max }) },
        ]}
      >
        <InputNumber min={f.min} max={f.max} precision={0} suffix={t(`settings.unit_${f.unit}`)} style={{ width: '100%' }} />
      </Form.Item>
    );
  };

  const onFinish = async (values: SettingsForm) => {
    const body: Partial<Settings> = {
      site_name: values.site_name.trim(),
      notice: values.notice ?? '',
      registration_open: values.registration_open,
      default_group: values.default_group,
      new_user_quota: moneyInput.toUnits(values.new_user_quota_amount || '0') ?? 0,
      unknown_model_policy: values.unknown_model_policy,
      // The price fields are only mounted under the "default" policy: keep the stored price when hidden.
      default_price: { ...ZERO_PRICE, ...settings.data?.default_price, ...values.default_price } as PriceRow,
      estimate_output_tokens: values.estimate_output_tokens ?? 0,
      ...Object.fromEntries(NUMBER_FIELDS.map((f) => [f.name, values[f.name] ?? f.min])),
      show_channel_to_users: values.show_channel_to_users,
      require_2fa_admins: values.require_2fa_admins,
      alerts: formToAlerts(values.alerts),
      email_verification: !!values.email_verification,
      password_reset: !!values.password_reset,
      captcha: normalizeCaptcha(values.captcha),
      ...values.extra,
    };
    // Send only what changed, so the audit log names the settings that were really edited.
    const current: Record<string, unknown> = {
      ...settings.data,
      log_retention_days: settings.data?.log_retention_days ?? 0,
      require_2fa_admins: settings.data?.require_2fa_admins ?? false,
      alerts: normalizeAlerts(settings.data?.alerts),
      email_verification: !!settings.data?.email_verification,
      password_reset: !!settings.data?.password_reset,
      captcha: normalizeCaptcha(settings.data?.captcha),
    };
    const changed = Object.fromEntries(
      Object.entries(body).filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(current[key])),
    ) as Partial<Settings>;
    if (Object.keys(changed).length === 0) {
      message.info(t('settings.unchanged'));
      return;
    }
    try {
      await save.mutateAsync(changed);
      message.success(t('common.saved'));
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  return (
    <>
      <PageHeader
        title={t('settings.title')}
        extra={
          <Button type="primary" onClick={() => form.submit()} loading={save.isPending} disabled={!settings.data}>
            {t('common.save')}
          </Button>
        }
      />
      {settings.error ? <QueryError error={settings.error} onRetry={() => void settings.refetch()} /> : null}
      {settings.isPending ? (
        <Skeleton active />
      ) : (
        <Form<SettingsForm>
          form={form}
          layout="vertical"
          onFinish={onFinish}
          name="settings-form"
          onValuesChange={(changed: Partial<SettingsForm>) => {
            if ('alerts' in changed || 'email_verification' in changed || 'password_reset' in changed || 'captcha' in changed)
              setAlertsDirty(true);
          }}
        >
          <Row gutter={[16, 16]}>
            <Col xs={24} lg={12}>
              <Card title={t('settings.site')}>
                <Form.Item name="site_name" label={t('settings.siteName')} rules={[{ max: 64, message: t('validation.tooLong', { max: 64 }) }]}>
                  <Input />
                </Form.Item>
                <Form.Item name="notice" label={t('settings.notice')} extra={t('settings.noticeHint')}>
                  <Input.TextArea autoSize={{ minRows: 2, maxRows: 6 }} />
                </Form.Item>
                <Form.Item name="registration_open" label={t('settings.registrationOpen')} valuePropName="checked">
                  <Switch />
                </Form.Item>
              </Card>
            </Col>
            <Col xs={24} lg={12}>
              <Card title={t('settings.defaults')}>
                <Form.Item name="default_group" label={t('settings.defaultGroup')} rules={[{ required: true, message: t('validation.required') }]}>
                  <Select options={(groups.data ?? []).map((g) => ({ value: g.name, label: g.name }))} />
                </Form.Item>
                <Form.Item name="new_user_quota_amount" label={t('settings.newUserQuota')} rules={decimalRules(t)}>
                  <Input prefix={moneyInput.prefix} suffix={moneyInput.suffix} inputMode="decimal" />
                </Form.Item>
                <Form.Item name="estimate_output_tokens" label={t('settings.estimateOutputTokens')} extra={t('settings.estimateOutputTokensHint')}>
                  <InputNumber min={0} precision={0} style={{ width: '100%' }} />
                </Form.Item>
              </Card>
            </Col>
            <Col xs={24} lg={12}>
              <Card title={t('settings.reliability')}>
                {NUMBER_FIELDS.filter((f) => f.name !== 'signup_rate_limit' && f.name !== 'log_retention_days').map((f) => numberItem(f.name))}
              </Card>
            </Col>
            <Col xs={24} lg={12}>
              <Card title={t('settings.access')}>
                {numberItem('signup_rate_limit')}
                <Form.Item
                  name="show_channel_to_users"
                  label={t('settings.showChannelToUsers')}
                  extra={t('settings.showChannelToUsersHint')}
                  valuePropName="checked"
                >
                  <Switch />
                </Form.Item>
                <Form.Item
                  name="require_2fa_admins"
                  label={t('security.require2faAdmins')}
                  extra={t('security.require2faAdminsHint')}
                  valuePropName="checked"
                >
                  <Switch />
                </Form.Item>
              </Card>
            </Col>
            <Col xs={24} lg={12}>
              <Card title={t('settings.logs')}>{numberItem('log_retention_days')}</Card>
            </Col>
            <Col xs={24}>
              <SigninCard dirty={alertsDirty} />
            </Col>
            <Col xs={24}>
              <AlertsCard dirty={alertsDirty} />
            </Col>
            <Col xs={24}>
              <Card title={t('settings.unknownModels')}>
                <Form.Item name="unknown_model_policy" label={t('settings.unknownModelPolicy')}>
                  <Select
                    options={[
                      { value: 'refuse', label: t('settings.policy_refuse') },
                      { value: 'default', label: t('settings.policy_default') },
                    ]}
                  />
                </Form.Item>
                {policy === 'default' ? (
                  <Row gutter={16}>
                    {PRICE_FIELDS.map((field) => (
                      <Col xs={12} md={8} xl={4} key={field}>
                        <Form.Item name={['default_price', field]} label={t(`modelPricing.${field}`)} rules={decimalRules(t)}>
                          <Input inputMode="decimal" />
                        </Form.Item>
                      </Col>
                    ))}
                  </Row>
                ) : null}
              </Card>
            </Col>
            {extraSettings(settings.data).length > 0 ? (
              <Col xs={24}>
                <Card title={t('settings.other')}>
                  <Row gutter={16}>
                    {extraSettings(settings.data).map(([key, value]) => (
                      <Col xs={24} md={12} xl={8} key={key}>
                        <Form.Item
                          name={['extra', key]}
                          label={t(`settings.extra_${key}`, { defaultValue: key })}
                          valuePropName={typeof value === 'boolean' ? 'checked' : 'value'}
                        >
                          {typeof value === 'boolean' ? (
                            <Switch />
                          ) : typeof value === 'number' ? (
                            <InputNumber style={{ width: '100%' }} />
                          ) : (
                            <Input />
                          )}
                        </Form.Item>
                      </Col>
                    ))}
                  </Row>
                </Card>
              </Col>
            ) : null}
          </Row>
        </Form>
      )}
      {settings.data ? (
        <Row gutter={[16, 16]} style={{ marginTop: 16 }}>
          <Col xs={24}>
            <OAuthProvidersCard value={settings.data.oauth} />
          </Col>
        </Row>
      ) : null}
    </>
  );
}
