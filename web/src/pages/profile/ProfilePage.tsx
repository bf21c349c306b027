import { App, Button, Card, Col, Descriptions, Form, Input, Row, Tag } from 'antd';
import { useTranslation } from 'react-i18next';
import { useChangePassword } from '../../api/auth';
import { useIdentities } from '../../api/oauth';
import { BalanceAlertCard } from './BalanceAlertCard';
import { LinkedAccountsCard } from './LinkedAccountsCard';
import { EmailCard } from './EmailCard';
import { RoutingPrefsCard } from './RoutingPrefsCard';
import { SessionsCard } from './SessionsCard';
import { TwoFactorCard } from './TwoFactorCard';
import { StepUpCancelled, useStepUp } from '../../components/StepUp';
import { useSession } from '../../auth/SessionProvider';
import { PageHeader } from '../../components/PageHeader';
import { formatTime } from '../../lib/format';
import { useFormat } from '../../lib/useFormat';
import { applyServerError, confirmRules, passwordRules } from '../../lib/validation';

interface PasswordForm {
  old_password: string;
  new_password: string;
  confirm: string;
}

export default function ProfilePage() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { user } = useSession();
  const { message } = App.useApp();
  const [form] = Form.useForm<PasswordForm>();
  const change = useChangePassword();
  const stepUp = useStepUp();
  // An account made by a provider sign-in sets its first password without an old one.
  const hasPassword = useIdentities().data?.has_password ?? true;

  const onFinish = async (values: PasswordForm) => {
    try {
      await stepUp.run((code) =>
        change.mutateAsync({ old_password: values.old_password ?? '', new_password: values.new_password, code }),
      );
      form.resetFields();
      message.success(t('profile.passwordChanged'));
    } catch (err) {
      if (err instanceof StepUpCancelled) return;
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  return (
    <>
      <PageHeader title={t('profile.title')} />
      <Row gutter={[16, 16]}>
        <Col xs={24} lg={12}>
          <Card title={t('profile.account')}>
            <Descriptions column={1} size="small">
              <Descriptions.Item label={t('auth.username')}>{user?.username}</Descriptions.Item>
              <Descriptions.Item label={t('auth.email')}>{user?.email || t('common.none')}</Descriptions.Item>
              <Descriptions.Item label={t('users.role')}>
                <Tag>{user ? t(`users.role_${user.role}`) : ''}</Tag>
              </Descriptions.Item>
              <Descriptions.Item label={t('users.group')}>{user?.group}</Descriptions.Item>
              <Descriptions.Item label={t('dashboard.balance')}>{fmt.money(user?.quota)}</Descriptions.Item>
              <Descriptions.Item label={t('dashboard.totalSpent')}>{fmt.money(user?.used_quota)}</Descriptions.Item>
              <Descriptions.Item label={t('users.requests')}>{fmt.number(user?.request_count)}</Descriptions.Item>
              <Descriptions.Item label={t('users.createdAt')}>{formatTime(user?.created_at)}</Descriptions.Item>
            </Descriptions>
          </Card>
        </Col>
        <Col xs={24} lg={12}>
          <BalanceAlertCard />
        </Col>
        <Col xs={24} lg={12}>
          <LinkedAccountsCard />
        </Col>
        <Col xs={24} lg={12}>
          <EmailCard />
        </Col>
        <Col xs={24} lg={12}>
          <Card title={t('profile.changePassword')}>
            <Form<PasswordForm> form={form} layout="vertical" onFinish={onFinish} name="change-password">
              {hasPassword ? (
                <Form.Item name="old_password" label={t('profile.oldPassword')} rules={[{ required: true, message: t('validation.required') }]}>
                  <Input.Password autoComplete="current-password" />
                </Form.Item>
              ) : null}
              <Form.Item name="new_password" label={t('profile.newPassword')} rules={passwordRules(t)}>
                <Input.Password autoComplete="new-password" />
              </Form.Item>
              <Form.Item
                name="confirm"
                label={t('auth.confirmPassword')}
                dependencies={['new_password']}
                rules={confirmRules(t, 'new_password')}
              >
                <Input.Password autoComplete="new-password" />
              </Form.Item>
              <Button type="primary" htmlType="submit" loading={change.isPending}>
                {t('profile.changePassword')}
              </Button>
            </Form>
          </Card>
        </Col>
        <Col xs={24} lg={12}>
          <TwoFactorCard />
        </Col>
        <Col xs={24} lg={12}>
          <RoutingPrefsCard />
        </Col>
        <Col xs={24}>
          <SessionsCard />
        </Col>
      </Row>
      {stepUp.modal}
    </>
  );
}
