import { Alert, App, Button, Form, Input, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { useSendEmail, useVerifyEmail } from '../../api/signin';
import { applyServerError } from '../../lib/validation';
import { AuthCard } from './AuthCard';

interface VerifyForm {
  email: string;
  code: string;
}

/** Enter the 6-digit sign-up code (`/verify-email?email=`); after it, sign in. */
export function VerifyEmailPage() {
  const { t } = useTranslation();
  const [search] = useSearchParams();
  const known = (search.get('email') ?? '').trim();
  return (
    <AuthCard title={t('signin.verifyTitle')}>
      <VerifyEmailForm email={known} />
      <Typography.Paragraph style={{ textAlign: 'center', marginTop: 16, marginBottom: 0 }}>
        <Link to="/login">{t('signin.backToSignIn')}</Link>
      </Typography.Paragraph>
    </AuthCard>
  );
}

/** The code form, with a resend button; onVerified runs after the code is accepted (default: go to sign-in). */
export function VerifyEmailForm({ email, onVerified }: { email: string; onVerified?: () => void | Promise<void> }) {
  const { t } = useTranslation();
  const [form] = Form.useForm<VerifyForm>();
  const verify = useVerifyEmail();
  const resend = useSendEmail();
  const navigate = useNavigate();
  const { message } = App.useApp();

  const onFinish = async (values: VerifyForm) => {
    try {
      await verify.mutateAsync({ email: (email || values.email).trim(), code: values.code.trim() });
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
      return;
    }
    message.success(t('signin.verified'));
    if (onVerified) await onVerified();
    else navigate('/login', { replace: true });
  };

  const onResend = async () => {
    const to = (email || form.getFieldValue('email') || '').trim();
    if (!to) {
      await form.validateFields(['email']);
      return;
    }
    try {
      await resend.mutateAsync({ email: to, purpose: 'verify' });
      message.success(t('signin.resent'));
    } catch (err) {
      message.error((err as Error).message);
    }
  };

  return (
    <>
      <Alert
        type="info"
        showIcon
        title={email ? t('signin.verifyHint', { email }) : t('signin.verifyHintNoEmail')}
        style={{ marginBottom: 16 }}
        data-testid="verify-hint"
      />
      <Form<VerifyForm> form={form} layout="vertical" onFinish={onFinish} requiredMark={false} name="verify-email">
        {email ? null : (
          <Form.Item name="email" label={t('auth.email')} rules={[{ required: true, type: 'email', message: t('validation.email') }]}>
            <Input autoComplete="email" />
          </Form.Item>
        )}
        <Form.Item
          name="code"
          label={t('signin.code')}
          rules={[{ required: true, pattern: /^\s*\d{6}\s*$/, message: t('signin.codeRule') }]}
        >
          <Input inputMode="numeric" autoComplete="one-time-code" maxLength={8} autoFocus data-testid="verify-code" />
        </Form.Item>
        <Button type="primary" htmlType="submit" block loading={verify.isPending}>
          {t('signin.verify')}
        </Button>
        <Button type="link" block onClick={() => void onResend()} loading={resend.isPending} style={{ marginTop: 8 }}>
          {t('signin.resend')}
        </Button>
      </Form>
    </>
  );
}
