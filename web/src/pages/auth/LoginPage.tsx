import { LockOutlined, UserOutlined } from '@ant-design/icons';
import { Alert, Button, Form, Input, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { Link, useLocation, useNavigate } from 'react-router';
import { useLogin, type Credentials } from '../../api/auth';
import { AuthCard } from './AuthCard';
import { OAuthButtons, OAuthError } from './OAuthButtons';

export function LoginPage() {
  const { t } = useTranslation();
  const login = useLogin();
  const navigate = useNavigate();
  const location = useLocation();
  const from = (location.state as { from?: string } | null)?.from;

  const onFinish = (values: Credentials) => {
    login.mutate(
      { username: values.username.trim(), password: values.password },
      { onSuccess: () => navigate(from && from.startsWith('/console') ? from : '/console', { replace: true }) },
    );
  };

  return (
    <AuthCard title={t('auth.signInTitle')}>
      <OAuthError />
      {login.error ? (
        <Alert type="error" showIcon title={login.error.message} style={{ marginBottom: 16 }} data-testid="login-error" />
      ) : null}
      <Form<Credentials> layout="vertical" onFinish={onFinish} requiredMark={false} name="login">
        <Form.Item name="username" label={t('auth.username')} rules={[{ required: true, message: t('validation.required') }]}>
          <Input prefix={<UserOutlined />} autoComplete="username" autoFocus />
        </Form.Item>
        <Form.Item name="password" label={t('auth.password')} rules={[{ required: true, message: t('validation.required') }]}>
          <Input.Password prefix={<LockOutlined />} autoComplete="current-password" />
        </Form.Item>
        <Button type="primary" htmlType="submit" block loading={login.isPending}>
          {t('auth.signIn')}
        </Button>
      </Form>
      <OAuthButtons />
      <Typography.Paragraph style={{ textAlign: 'center', marginTop: 16, marginBottom: 0 }}>
        {t('auth.noAccount')} <Link to="/register">{t('auth.signUp')}</Link>
      </Typography.Paragraph>
    </AuthCard>
  );
}
