import { App, Button, Card, Descriptions, Form, Input, Space, Typography } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useChangeEmail, useSendEmailChange } from '../../api/signin';
import { useSession } from '../../auth/SessionProvider';
import { StepUpCancelled, useStepUp } from '../../components/StepUp';
import { applyServerError } from '../../lib/validation';

interface EmailForm {
  email: string;
  code?: string;
}

/** The profile's e-mail card: a new address takes effect only with the code sent to it. */
export function EmailCard() {
  const { t } = useTranslation();
  const { user } = useSession();
  const { message } = App.useApp();
  const [form] = Form.useForm<EmailForm>();
  const send = useSendEmailChange();
  const change = useChangeEmail();
  const [sentTo, setSentTo] = useState('');
  const stepUp = useStepUp();

  const onSend = async () => {
    let email: string;
    try {
      email = ((await form.validateFields(['email'])) as EmailForm).email.trim();
    } catch {
      return;
    }
    try {
      await send.mutateAsync({ email });
      setSentTo(email);
      message.success(t('signin.codeSent', { email }));
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  const onFinish = async (values: EmailForm) => {
    try {
      await stepUp.run((totp) => change.mutateAsync({ email: sentTo, code: (values.code ?? '').trim(), totp }));
      form.resetFields();
      setSentTo('');
      message.success(t('signin.emailChanged'));
    } catch (err) {
      if (err instanceof StepUpCancelled) return;
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  return (
    <Card title={t('signin.emailCard')} data-testid="email-card">
      <Descriptions column={1} size="small" style={{ marginBottom: 16 }}>
        <Descriptions.Item label={t('signin.emailCurrent')}>{user?.email || t('common.none')}</Descriptions.Item>
      </Descriptions>
      <Typography.Paragraph type="secondary">{t('signin.emailChangeHint')}</Typography.Paragraph>
      <Form<EmailForm> form={form} layout="vertical" onFinish={onFinish} name="change-email">
        <Form.Item label={t('signin.emailNew')} required>
          <Space.Compact style={{ width: '100%' }}>
            <Form.Item name="email" noStyle rules={[{ required: true, type: 'email', message: t('validation.email') }]}>
              <Input autoComplete="email" disabled={!!sentTo} data-testid="new-email" aria-label={t('signin.emailNew')} />
            </Form.Item>
            <Button onClick={() => void onSend()} loading={send.isPending} disabled={!!sentTo}>
              {t('signin.sendCode')}
            </Button>
          </Space.Compact>
        </Form.Item>
        {sentTo ? (
          <>
            <Form.Item
              name="code"
              label={t('signin.code')}
              rules={[{ required: true, pattern: /^\s*\d{6}\s*$/, message: t('signin.codeRule') }]}
            >
              <Input inputMode="numeric" autoComplete="one-time-code" maxLength={8} data-testid="email-code" />
            </Form.Item>
            <Space>
              <Button type="primary" htmlType="submit" loading={change.isPending}>
                {t('signin.changeEmail')}
              </Button>
              <Button onClick={() => setSentTo('')}>{t('common.cancel')}</Button>
            </Space>
          </>
        ) : null}
      </Form>
      {stepUp.modal}
    </Card>
  );
}
