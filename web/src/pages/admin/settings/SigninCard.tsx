import { SendOutlined } from '@ant-design/icons';
import { App, Button, Card, Col, Form, Input, InputNumber, Row, Select, Space, Switch, Typography } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useSmtpTest } from '../../../api/signin';
import type { CaptchaSettings } from '../../../api/types';

/** The form values of this section (top-level settings). */
export interface SigninFormValues {
  email_verification: boolean;
  password_reset: boolean;
  captcha: CaptchaSettings;
}

export const CAPTCHA_DEFAULTS: CaptchaSettings = { provider: '', site_key: '', secret: '', verify_url: '', login_after_failures: 3 };

/** The captcha object in the server's field order, so an unchanged one compares equal. */
export function normalizeCaptcha(c: Partial<CaptchaSettings> | undefined): CaptchaSettings {
  const v = { ...CAPTCHA_DEFAULTS, ...c };
  return {
    provider: v.provider ?? '',
    site_key: (v.site_key ?? '').trim(),
    secret: v.secret ?? '',
    verify_url: (v.verify_url ?? '').trim(),
    login_after_failures: v.login_after_failures ?? 3,
  };
}

const PROVIDERS = ['', 'turnstile', 'hcaptcha'] as const;

/** The "Sign-in and sign-up" section: e-mail verification, password reset, captcha, and the SMTP test. */
export function SigninCard({ dirty }: { dirty: boolean }) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const test = useSmtpTest();
  const [to, setTo] = useState('');
  const provider = Form.useWatch(['captcha', 'provider']) as string | undefined;

  const onTest = () =>
    test.mutate(to.trim(), {
      onSuccess: (res) => message.success(t('signin.smtpTestSent', { to: res.to })),
      onError: (err) => message.error(err.message),
    });

  return (
    <Card title={t('signin.settingsTitle')} data-testid="signin-card">
      <Typography.Paragraph type="secondary">{t('signin.settingsHint')}</Typography.Paragraph>
      <Row gutter={16}>
        <Col xs={24} md={12}>
          <Form.Item name="email_verification" label={t('signin.emailVerification')} extra={t('signin.emailVerificationHint')} valuePropName="checked">
            <Switch data-testid="email-verification" />
          </Form.Item>
        </Col>
        <Col xs={24} md={12}>
          <Form.Item name="password_reset" label={t('signin.passwordReset')} extra={t('signin.passwordResetHint')} valuePropName="checked">
            <Switch data-testid="password-reset" />
          </Form.Item>
        </Col>
        <Col xs={24} md={12}>
          <Form.Item name={['captcha', 'provider']} label={t('signin.captchaProvider')} extra={t('signin.captchaHint')}>
            <Select options={PROVIDERS.map((p) => ({ value: p, label: t(`signin.captcha_${p || 'off'}`) }))} data-testid="captcha-provider" />
          </Form.Item>
        </Col>
        <Col xs={24} md={12}>
          <Form.Item
            name={['captcha', 'login_after_failures']}
            label={t('signin.loginAfterFailures')}
            extra={t('signin.loginAfterFailuresHint')}
            rules={[{ type: 'number', min: 0, max: 100, message: t('settings.range', { min: 0, max: 100 }) }]}
          >
            <InputNumber min={0} max={100} precision={0} style={{ width: '100%' }} />
          </Form.Item>
        </Col>
        {provider ? (
          <>
            <Col xs={24} md={12}>
              <Form.Item name={['captcha', 'site_key']} label={t('signin.siteKey')} rules={[{ required: true, message: t('validation.required') }]}>
                <Input autoComplete="off" />
              </Form.Item>
            </Col>
            <Col xs={24} md={12}>
              <Form.Item name={['captcha', 'secret']} label={t('signin.secret')} rules={[{ required: true, message: t('validation.required') }]}>
                <Input.Password autoComplete="new-password" />
              </Form.Item>
            </Col>
            <Col xs={24}>
              <Form.Item
                name={['captcha', 'verify_url']}
                label={t('signin.verifyUrl')}
                extra={t('signin.verifyUrlHint')}
                rules={[{ pattern: /^https?:\/\/\S+$/, message: t('validation.url') }]}
              >
                <Input />
              </Form.Item>
            </Col>
          </>
        ) : null}
      </Row>
      {dirty ? <Typography.Paragraph type="warning">{t('alertSettings.saveBeforeTest')}</Typography.Paragraph> : null}
      <Form.Item label={t('signin.smtpTestTo')} extra={t('signin.smtpTestToHint')}>
        <Space.Compact style={{ width: '100%', maxWidth: 480 }}>
          <Input value={to} onChange={(e) => setTo(e.target.value)} autoComplete="email" data-testid="smtp-test-to" aria-label={t('signin.smtpTestTo')} />
          <Button icon={<SendOutlined />} onClick={onTest} loading={test.isPending} data-testid="smtp-test">
            {t('signin.smtpTest')}
          </Button>
        </Space.Compact>
      </Form.Item>
    </Card>
  );
}
