import { App, Form, Input, Modal, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { useAdjustQuota } from '../../../api/users';
import type { User } from '../../../api/types';
import { isDecimal } from '../../../lib/money';
import { useFormat } from '../../../lib/useFormat';
import { applyServerError } from '../../../lib/validation';

interface QuotaForm {
  amount: string;
  reason: string;
}

/** Add to (or, with a minus sign, take from) a user's balance, with a reason for the audit log. */
export function QuotaModal({ user, onClose }: { user: User | null; onClose: () => void }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { message } = App.useApp();
  const [form] = Form.useForm<QuotaForm>();
  const adjust = useAdjustQuota();
  const amount = Form.useWatch('amount', form);
  const delta = amount && isDecimal(amount, true) ? fmt.moneyInput.toUnits(amount) : null;

  const onFinish = async (values: QuotaForm) => {
    if (!user) return;
    const units = fmt.moneyInput.toUnits(values.amount);
    if (units === null) return;
    try {
      await adjust.mutateAsync({ id: user.id, delta: units, reason: values.reason.trim() });
      message.success(t('users.quotaAdjusted'));
      form.resetFields();
      onClose();
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  return (
    <Modal
      open={!!user}
      title={t('users.adjustQuotaTitle', { name: user?.username ?? '' })}
      onCancel={onClose}
      onOk={() => form.submit()}
      okText={t('common.save')}
      cancelText={t('common.cancel')}
      confirmLoading={adjust.isPending}
      destroyOnHidden
    >
      <Typography.Paragraph>{t('users.currentBalance', { balance: fmt.money(user?.quota) })}</Typography.Paragraph>
      <Form<QuotaForm> form={form} layout="vertical" onFinish={onFinish} name="quota-form" preserve={false}>
        <Form.Item
          name="amount"
          label={t('users.amountMoney')}
          extra={delta !== null && user ? t('users.newBalance', { balance: fmt.money(user.quota + delta) }) : t('users.amountHint')}
          rules={[
            { required: true, message: t('validation.required') },
            {
              validator: (_, v: string) =>
                !v || (isDecimal(v, true) && fmt.moneyInput.toUnits(v) !== 0) ? Promise.resolve() : Promise.reject(new Error(t('validation.nonZeroDecimal'))),
            },
          ]}
        >
          <Input prefix={fmt.moneyInput.prefix} suffix={fmt.moneyInput.suffix} inputMode="decimal" />
        </Form.Item>
        <Form.Item
          name="reason"
          label={t('users.reason')}
          rules={[
            { required: true, whitespace: true, message: t('validation.required') },
            { max: 255, message: t('validation.tooLong', { max: 255 }) },
          ]}
        >
          <Input.TextArea autoSize={{ minRows: 2 }} />
        </Form.Item>
      </Form>
    </Modal>
  );
}
