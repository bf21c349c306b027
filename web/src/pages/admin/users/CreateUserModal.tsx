import { App, Form, Input, Modal, Select } from 'antd';
import { useTranslation } from 'react-i18next';
import { useCreateUser } from '../../../api/users';
import type { Role } from '../../../api/types';
import { isDecimal } from '../../../lib/money';
import { useFormat } from '../../../lib/useFormat';
import { applyServerError } from '../../../lib/validation';

interface NewUserForm {
  username: string;
  password: string;
  email?: string;
  role: Role;
  amount?: string;
}

/** An admin creates a user: name, password (the sign-up policy), e-mail, role and an optional starting balance. */
export function CreateUserModal({ open, onClose }: { open: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { message } = App.useApp();
  const [form] = Form.useForm<NewUserForm>();
  const create = useCreateUser();

  const onFinish = async (v: NewUserForm) => {
    const quota = v.amount ? fmt.moneyInput.toUnits(v.amount) : 0;
    try {
      await create.mutateAsync({
        username: v.username.trim(),
        password: v.password,
        email: v.email?.trim() || undefined,
        role: v.role,
        quota: quota ?? 0,
      });
      message.success(t('users.created', { name: v.username.trim() }));
      form.resetFields();
      onClose();
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  return (
    <Modal
      open={open}
      title={t('users.createTitle')}
      onCancel={onClose}
      onOk={() => form.submit()}
      okText={t('users.create')}
      cancelText={t('common.cancel')}
      confirmLoading={create.isPending}
      destroyOnHidden
    >
      <Form<NewUserForm> form={form} layout="vertical" onFinish={onFinish} name="create-user" initialValues={{ role: 'user' }} preserve={false}>
        <Form.Item name="username" label={t('auth.username')} rules={[{ required: true, message: t('validation.required') }]}>
          <Input autoComplete="off" />
        </Form.Item>
        <Form.Item name="password" label={t('auth.password')} rules={[{ required: true, message: t('validation.required') }]}>
          <Input.Password autoComplete="new-password" />
        </Form.Item>
        <Form.Item name="email" label={t('auth.email')} rules={[{ type: 'email', message: t('validation.email') }]}>
          <Input autoComplete="off" />
        </Form.Item>
        <Form.Item name="role" label={t('users.role')}>
          <Select options={(['user', 'admin'] as const).map((r) => ({ value: r, label: t(`users.role_${r}`) }))} />
        </Form.Item>
        <Form.Item
          name="amount"
          label={t('users.startingBalance')}
          rules={[
            {
              validator: (_, v: string) =>
                !v || (isDecimal(v, false) && (fmt.moneyInput.toUnits(v) ?? -1) >= 0)
                  ? Promise.resolve()
                  : Promise.reject(new Error(t('validation.decimal'))),
            },
          ]}
        >
          <Input prefix={fmt.moneyInput.prefix} suffix={fmt.moneyInput.suffix} />
        </Form.Item>
      </Form>
    </Modal>
  );
}
