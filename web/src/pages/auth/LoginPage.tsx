import { LockOutlined, UserOutlined } from '@ant-design/icons';
import { Alert, Button, Form, Input, Typography } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useLocation, useNavigate } from 'react-router';
import { useLogin, useSiteStatus, type Credentials } from '../../api/auth';
import { ApiError } from '../../api/client';
import { CaptchaWidget } from '../../components/CaptchaWidget';
import { AuthCard } from './AuthCard';
import { OAuthButtons, OAuthError } from './OAuthButtons';

export function LoginPage() {
  const { t } = useTranslation();
  const login = useLogin();
  const navigate = useNavigate();
  const location = useLocation();
  const from = (location.state as { from?: string } | null)?.from;
  const status = useSiteStatus();
  const [captcha, setCaptcha] = useState('');
  const errorCode = login.error instanceof ApiError ? login.error.code : '';
  // The server asks for the captcha after failures; show it from then on.
  const [askCaptcha, setAskCaptcha] = useState(false);
  if (errorCode === 'captcha_failed' && !askCaptcha) setAskCaptcha(true);

  const onFinish = (values: Credentials) => {
    login.mutate(
      { username: values.username.trim(), password: values.password, ...(captcha ? { captcha } : {}) },
      { onSuccess: () => navigate(from && from.startsWith('/console') ? from : '/console', { replace: true }) },
    );
  };

  return (
    <AuthCard title={t('auth.signInTitle')}>
      <OAuthError />
      {login.error ? (
        <Alert
          type="error"
          showIcon
          title={login.error.message}
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
      <OAuthButtons />
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
