import { LockOutlined, SafetyOutlined, UserOutlined } from '@ant-design/icons';
import { Alert, Button, Form, Input, Typography } from 'antd';
import { lazy, Suspense, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useLocation, useNavigate } from 'react-router';
import { useLogin, useSiteStatus, type Credentials } from '../../api/auth';
import { ApiError } from '../../api/client';
import { useLoginTotp } from '../../api/security';
import { CaptchaWidget } from '../../components/CaptchaWidget';
import { AuthCard } from './AuthCard';
import { OAuthError } from './OAuthButtons';

const OAuthButtons = lazy(() => import('./OAuthProviders'));

export function LoginPage() {
  const { t } = useTranslation();
  const login = useLogin();
  const second = useLoginTotp();
  const navigate = useNavigate();
  const location = useLocation();
  const from = (location.state as { from?: string } | null)?.from;
  const status = useSiteStatus();
  const [captcha, setCaptcha] = useState('');
  const errorCode = login.error instanceof ApiError ? login.error.code : '';
  // A ticket from `?ticket=` (an OAuth sign-in of a user with 2FA) starts at the code step.
  const [ticket, setTicket] = useState<string | null>(() => new URLSearchParams(location.search).get('ticket'));
  const done = () => navigate(from && from.startsWith('/console') ? from : '/console', { replace: true });
  // The server asks for the captcha after failures; show it from then on.
  const [askCaptcha, setAskCaptcha] = useState(false);
  if (errorCode === 'captcha_failed' && !askCaptcha) setAskCaptcha(true);

  const onFinish = (values: Credentials) => {
    login.mutate(
      { username: values.username.trim(), password: values.password, ...(captcha ? { captcha } : {}) },
      {
        onSuccess: done,
        onError: (err) => {
          // The password was right; the account asks for its second factor.
          if (err instanceof ApiError && err.code === 'totp_required' && err.ticket) setTicket(err.ticket);
        },
      },
    );
  };
  const onCode = ({ totp }: { totp: string }) => {
    if (!ticket) return;
    second.mutate(
      { ticket, totp: totp.trim() },
      {
        onSuccess: done,
        onError: (err) => {
          if (err instanceof ApiError && err.code === 'totp_ticket_invalid') setTicket(null);
        },
      },
    );
  };

  if (ticket) {
    return (
      <AuthCard title={t('security.loginCodeTitle')}>
        {second.error ? (
          <Alert type="error" showIcon title={second.error.message} style={{ marginBottom: 16 }} data-testid="login-error" />
        ) : null}
        <Typography.Paragraph type="secondary">{t('security.loginCodeHint')}</Typography.Paragraph>
        <Form<{ totp: string }> layout="vertical" onFinish={onCode} requiredMark={false} name="login-totp">
          <Form.Item name="totp" label={t('security.code')} rules={[{ required: true, message: t('validation.required') }]}>
            <Input prefix={<SafetyOutlined />} autoComplete="one-time-code" inputMode="numeric" autoFocus maxLength={32} />
          </Form.Item>
          <Button type="primary" htmlType="submit" block loading={second.isPending}>
            {t('security.verify')}
          </Button>
        </Form>
        <Typography.Paragraph style={{ textAlign: 'center', marginTop: 16, marginBottom: 0 }}>
          <Typography.Link onClick={() => setTicket(null)}>{t('security.backToPassword')}</Typography.Link>
        </Typography.Paragraph>
      </AuthCard>
    );
  }

  const loginError = errorCode === 'totp_required' ? null : login.error;

  return (
    <AuthCard title={t('auth.signInTitle')}>
      <OAuthError />
      {second.error && !loginError ? (
        <Alert type="error" showIcon title={second.error.message} style={{ marginBottom: 16 }} data-testid="login-error" />
      ) : null}
      {loginError ? (
        <Alert
          type="error"
          showIcon
          title={loginError.message}
          style={{ marginBottom: 16 }}
          data-testid="login-error"
          action={
            errorCode === 'email_unverified' ? (
              <Link to="/verify-email" data-testid="verify-link">
                {t('signin.verifyNow')}
              </Link>
            ) : undefined
          }
        />
      ) : null}
      <Form<Credentials> layout="vertical" onFinish={onFinish} requiredMark={false} name="login">
        <Form.Item name="username" label={t('auth.username')} rules={[{ required: true, message: t('validation.required') }]}>
          <Input prefix={<UserOutlined />} autoComplete="username" autoFocus />
        </Form.Item>
        <Form.Item name="password" label={t('auth.password')} rules={[{ required: true, message: t('validation.required') }]}>
          <Input.Password prefix={<LockOutlined />} autoComplete="current-password" />
        </Form.Item>
        {askCaptcha ? <CaptchaWidget captcha={status.data?.captcha} onToken={setCaptcha} /> : null}
        <Button type="primary" htmlType="submit" block loading={login.isPending}>
          {t('auth.signIn')}
        </Button>
      </Form>
      {status.data?.oauth_providers?.length ? (
        <Suspense fallback={null}>
          <OAuthButtons />
        </Suspense>
      ) : null}
      {status.data?.password_reset ? (
        <Typography.Paragraph style={{ textAlign: 'center', marginTop: 16, marginBottom: 0 }}>
          <Link to="/forgot-password" data-testid="forgot-link">
            {t('signin.forgotPassword')}
          </Link>
        </Typography.Paragraph>
      ) : null}
      <Typography.Paragraph style={{ textAlign: 'center', marginTop: 16, marginBottom: 0 }}>
        {t('auth.noAccount')} <Link to="/register">{t('auth.signUp')}</Link>
      </Typography.Paragraph>
    </AuthCard>
  );
}
