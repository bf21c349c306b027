import { Alert, App, Button, Form, Input, Result, Typography } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useSiteStatus } from '../../api/auth';
import { useSendEmail } from '../../api/signin';
import { CaptchaWidget } from '../../components/CaptchaWidget';
import { applyServerError } from '../../lib/validation';
import { AuthCard } from './AuthCard';

/** "Forgot password": asks for a reset link; the answer is the same whether or not the address is known. */
export function ForgotPasswordPage() {
  const { t } = useTranslation();
  const [form] = Form.useForm<{ email: string }>();
  const status = useSiteStatus();
  const send = useSendEmail();
  const { message } = App.useApp();
  const [captcha, setCaptcha] = useState('');
  const [sent, setSent] = useState(false);
  const needsCaptcha = !!status.data?.captcha;

  const onFinish = async (values: { email: string }) => {
    if (needsCaptcha && !captcha) {
      message.warning(t('signin.captchaRequired'));
      return;
    }
    try {
      await send.mutateAsync({ email: values.email.trim(), purpose: 'reset', captcha: captcha || undefined });
      setSent(true);
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  return (
    <AuthCard title={t('signin.forgotTitle')}>
      {sent ? (
        <Result status="success" subTitle={t('signin.linkSent')} data-testid="reset-link-sent" />
      ) : (
        <>
          {status.data && !status.data.password_reset ? (
            <Alert type="warning" showIcon title={t('signin.resetDisabled')} style={{ marginBottom: 16 }} />
          ) : null}
          <Typography.Paragraph type="secondary">{t('signin.forgotHint')}</Typography.Paragraph>
          <Form form={form} layout="vertical" onFinish={onFinish} requiredMark={false} name="forgot-password">
            <Form.Item name="email" label={t('auth.email')} rules={[{ required: true, type: 'email', message: t('validation.email') }]}>
              <Input autoComplete="email" autoFocus />
            </Form.Item>
            <CaptchaWidget captcha={status.data?.captcha} onToken={setCaptcha} />
            <Button type="primary" htmlType="submit" block loading={send.isPending}>
              {t('signin.sendLink')}
            </Button>
          </Form>
        </>
      )}
      <Typography.Paragraph style={{ textAlign: 'center', marginTop: 16, marginBottom: 0 }}>
        <Link to="/login">{t('signin.backToSignIn')}</Link>
      </Typography.Paragraph>
    </AuthCard>
  );
}
