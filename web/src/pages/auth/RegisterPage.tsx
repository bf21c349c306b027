import { Alert, App, Button, Form, Input, Result, Spin, Typography } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { useLogin, useRegister, useSiteStatus } from '../../api/auth';
import { CaptchaWidget } from '../../components/CaptchaWidget';
import { applyServerError, confirmRules, passwordRules, usernameRules } from '../../lib/validation';
import { AuthCard } from './AuthCard';
import { VerifyEmailForm } from './VerifyEmailPage';

interface RegisterForm {
  username: string;
  email?: string;
  password: string;
  confirm: string;
}

export function RegisterPage() {
  const { t, i18n } = useTranslation();
  const [form] = Form.useForm<RegisterForm>();
  const [captcha, setCaptcha] = useState('');
  // Set when the site verifies e-mail: the account waits for its code (and the password signs in after it).
  const [pending, setPending] = useState<{ username: string; password: string; email: string } | null>(null);
  const status = useSiteStatus();
  const register = useRegister();
  const login = useLogin();
  const navigate = useNavigate();
  const { message } = App.useApp();
  const [search] = useSearchParams();
  const affCode = (search.get('aff') ?? '').trim();

  const signIn = async (username: string, password: string) => {
    try {
      await login.mutateAsync({ username, password });
      navigate('/console', { replace: true });
    } catch {
      navigate('/login', { replace: true });
    }
  };

  const onFinish = async (values: RegisterForm) => {
    const username = values.username.trim();
    if (status.data?.captcha && !captcha) {
      message.warning(t('signin.captchaRequired'));
      return;
    }
    let created;
    try {
      created = await register.mutateAsync({
        username,
        password: values.password,
        email: values.email?.trim() || undefined,
        language: i18n.language === 'zh-CN' ? 'zh-CN' : 'en',
        ...(captcha ? { captcha } : {}),
        ...(affCode ? { aff_code: affCode } : {}),
      });
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
      return;
    }
    message.success(t('auth.registered'));
    if (created.user.status === 'unverified') {
      setPending({ username, password: values.password, email: created.user.email ?? values.email?.trim() ?? '' });
      return;
    }
    await signIn(username, values.password);
  };

  if (pending) {
    return (
      <AuthCard title={t('signin.verifyTitle')}>
        <VerifyEmailForm email={pending.email} onVerified={() => signIn(pending.username, pending.password)} />
      </AuthCard>
    );
  }
  if (status.isPending) {
    return (
      <AuthCard title={t('auth.signUpTitle')}>
        <Spin />
      </AuthCard>
    );
  }
  if (status.data && !status.data.registration_open) {
    return (
      <AuthCard title={t('auth.signUpTitle')}>
        <Result
          status="info"
          title={t('auth.registrationClosed')}
          subTitle={t('auth.registrationClosedHint')}
          extra={<Link to="/login">{t('auth.signIn')}</Link>}
          data-testid="registration-closed"
        />
      </AuthCard>
    );
  }

  return (
    <AuthCard title={t('auth.signUpTitle')}>
      {status.error ? <Alert type="warning" showIcon title={status.error.message} style={{ marginBottom: 16 }} /> : null}
      {affCode ? (
        <Alert type="success" showIcon title={t('auth.invitedBy', { code: affCode })} style={{ marginBottom: 16 }} data-testid="invited-by" />
      ) : null}
      <Form<RegisterForm> form={form} layout="vertical" onFinish={onFinish} requiredMark={false} name="register">
        <Form.Item name="username" label={t('auth.username')} rules={usernameRules(t)} extra={t('auth.usernameHint')}>
          <Input autoComplete="username" autoFocus />
        </Form.Item>
        <Form.Item
          name="email"
          label={status.data?.email_verification ? t('signin.emailRequired') : t('auth.emailOptional')}
          rules={[{ type: 'email', required: !!status.data?.email_verification, message: t('validation.email') }]}
        >
          <Input autoComplete="email" />
        </Form.Item>
        <Form.Item name="password" label={t('auth.password')} rules={passwordRules(t)}>
          <Input.Password autoComplete="new-password" />
        </Form.Item>
        <Form.Item name="confirm" label={t('auth.confirmPassword')} dependencies={['password']} rules={confirmRules(t, 'password')}>
          <Input.Password autoComplete="new-password" />
        </Form.Item>
        <CaptchaWidget captcha={status.data?.captcha} onToken={setCaptcha} />
        <Button type="primary" htmlType="submit" block loading={register.isPending || login.isPending}>
          {t('auth.signUp')}
        </Button>
      </Form>
      <Typography.Paragraph style={{ textAlign: 'center', marginTop: 16, marginBottom: 0 }}>
        {t('auth.haveAccount')} <Link to="/login">{t('auth.signIn')}</Link>
      </Typography.Paragraph>
    </AuthCard>
  );
}
