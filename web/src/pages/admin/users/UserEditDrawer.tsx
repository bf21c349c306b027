import { App, Button, Drawer, Flex, Form, Input, InputNumber, Select } from 'antd';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useGroups } from '../../../api/groups';
import { useTiers } from '../../../api/tiers';
import { useUpdateUser, type UserPatch } from '../../../api/users';
import type { Role, User } from '../../../api/types';
import { useSession } from '../../../auth/SessionProvider';
import { applyServerError } from '../../../lib/validation';
import { UserSecurity } from './UserSecurity';

const ROLES: Role[] = ['user', 'admin', 'root'];

/** Edit a user's role, group, tier, status and email. Only root may grant admin or root. */
export function UserEditDrawer({ user, onClose }: { user: User | null; onClose: () => void }) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const { user: me } = useSession();
  const [form] = Form.useForm<UserPatch>();
  const groups = useGroups(!!user);
  const tiers = useTiers(!!user);
  const update = useUpdateUser();

  useEffect(() => {
    if (user) {
      form.setFieldsValue({ role: user.role, group: user.group, tier: user.tier || undefined, status: user.status === 'unverified' ? undefined : user.status, email: user.email ?? '', rpm: user.rpm ?? 0, tpm: user.tpm ?? 0 });
    }
  }, [user, form]);

  const onFinish = async (values: UserPatch) => {
    if (!user) return;
    const body: UserPatch = {};
    if (values.role !== user.role) body.role = values.role;
    if (values.group !== user.group) body.group = values.group;
    if (values.tier && values.tier !== (user.tier ?? '')) body.tier = values.tier;
    if (values.status !== user.status) body.status = values.status;
    if ((values.email ?? '') !== (user.email ?? '')) body.email = values.email?.trim();
    if ((values.rpm ?? 0) !== (user.rpm ?? 0)) body.rpm = values.rpm ?? 0;
    if ((values.tpm ?? 0) !== (user.tpm ?? 0)) body.tpm = values.tpm ?? 0;
    try {
      if (Object.keys(body).length > 0) await update.mutateAsync({ id: user.id, body });
      message.success(t('common.saved'));
      onClose();
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  return (
    <Drawer
      open={!!user}
      onClose={onClose}
      title={t('users.editTitle', { name: user?.username ?? '' })}
      destroyOnHidden
      extra={
        <Flex gap={8}>
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type="primary" onClick={() => form.submit()} loading={update.isPending}>
            {t('common.save')}
          </Button>
        </Flex>
      }
    >
      <Form<UserPatch> form={form} layout="vertical" onFinish={onFinish} name="user-form">
        <Form.Item name="role" label={t('users.role')} rules={[{ required: true, message: t('validation.required') }]}>
          <Select
            options={ROLES.map((role) => ({
              value: role,
              label: t(`users.role_${role}`),
              disabled: role !== 'user' && me?.role !== 'root',
            }))}
          />
        </Form.Item>
        <Form.Item name="group" label={t('users.group')} rules={[{ required: true, message: t('validation.required') }]}>
          <Select loading={groups.isPending} options={(groups.data ?? []).map((g) => ({ value: g.name, label: `${g.name} ×${g.ratio}` }))} />
        </Form.Item>
        <Form.Item name="tier" label={t('users.tier')} extra={t('users.tierHint')}>
          <Select
            loading={tiers.isPending}
            data-testid="user-tier"
            options={(tiers.data ?? []).map((tier) => ({ value: tier.name, label: `${tier.name} ×${tier.ratio}` }))}
          />
        </Form.Item>
        <Form.Item name="status" label={t('common.status')}>
          <Select
            options={[
              { value: 'enabled', label: t('common.enabled') },
              { value: 'disabled', label: t('common.disabled') },
            ]}
          />
        </Form.Item>
        <Form.Item name="email" label={t('auth.email')} rules={[{ type: 'email', message: t('validation.email') }]}>
          <Input />
        </Form.Item>
        <Flex gap={16} wrap>
          <Form.Item name="rpm" label={t('users.rpm')} extra={t('keys.zeroUnlimited')} style={{ flex: 1, minWidth: 140 }}>
            <InputNumber min={0} precision={0} style={{ width: '100%' }} />
          </Form.Item>
          <Form.Item name="tpm" label={t('users.tpm')} extra={t('keys.zeroUnlimited')} style={{ flex: 1, minWidth: 140 }}>
            <InputNumber min={0} precision={0} style={{ width: '100%' }} />
          </Form.Item>
        </Flex>
      </Form>
      {user ? <UserSecurity user={user} /> : null}
    </Drawer>
  );
}
