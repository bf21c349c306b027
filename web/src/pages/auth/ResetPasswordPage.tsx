import { App, Button, Form, Input, Result, Typography } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useSearchParams } from 'react-router';
import { useResetPassword } from '../../api/signin';
import { applyServerError, confirmRules, passwordRules } from '../../lib/validation';
import { AuthCard } from './AuthCard';

interface ResetForm {
  new_password: string;
  confirm: string;
}

/** `/reset-password?token=`: the page the reset e-mail links to. */
export function ResetPasswordPage() {
  const { t } = useTranslation();
  const [search] = useSearchParams();
  const token = search.get('token') ?? '';
  const [form] = Form.useForm<ResetForm>();
  const reset = useResetPassword();
  const { message } = App.useApp();
  const [done, setDone] = useState(false);

  const onFinish = async (values: ResetForm) => {
    try {
      await reset.mutateAsync({ token, new_password: values.new_password });
      setDone(true);
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  let body;
  if (done) {
    body = <Result status="success" subTitle={t('signin.resetDone')} data-testid="reset-done" />;
  } else if (!token) {
    body = <Result status="warning" subTitle={t('signin.resetNoToken')} />;
  } else {
    body = (
      <Form<ResetForm> form={form} layout="vertical" onFinish={onFinish} requiredMark={false} name="reset-password">
        <Form.Item name="new_password" label={t('signin.newPassword')} rules={passwordRules(t)}>
          <Input.Password autoComplete="new-password" autoFocus />
        </Form.Item>
        <Form.Item name="confirm" label={t('auth.confirmPassword')} dependencies={['new_password']} rules={confirmRules(t, 'new_password')}>
          <Input.Password autoComplete="new-password" />
        </Form.Item>
        <Button type="primary" htmlType="submit" block loading={reset.isPending}>
          {t('signin.resetSubmit')}
        </Button>
      </Form>
    );
  }
  return (
    <AuthCard title={t('signin.resetTitle')}>
      {body}
      <Typography.Paragraph style={{ textAlign: 'center', marginTop: 16, marginBottom: 0 }}>
        <Link to="/login">{t('signin.backToSignIn')}</Link>
      </Typography.Paragraph>
    </AuthCard>
  );
}
