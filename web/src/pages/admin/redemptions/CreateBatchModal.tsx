import { App, DatePicker, Form, Input, InputNumber, Modal } from 'antd';
import dayjs, { type Dayjs } from 'dayjs';
import { useTranslation } from 'react-i18next';
import { useCreateBatch } from '../../../api/adminMoney';
import type { CreatedBatch } from '../../../api/types';
import { useFormat } from '../../../lib/useFormat';
import { applyServerError, decimalRules } from '../../../lib/validation';

interface BatchForm {
  name: string;
  count: number;
  quota_amount: string;
  expires_at?: Dayjs | null;
}

export const MAX_BATCH = 10_000;

/** Asks for a batch's name, size, value and expiry; answers the created codes. */
export function CreateBatchModal({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (b: CreatedBatch) => void }) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const { moneyInput } = useFormat();
  const [form] = Form.useForm<BatchForm>();
  const create = useCreateBatch();

  const onFinish = async (values: BatchForm) => {
    try {
      const created = await create.mutateAsync({
        name: values.name.trim(),
        count: values.count,
        quota: moneyInput.toUnits(values.quota_amount) ?? 0,
        ...(values.expires_at ? { expires_at: values.expires_at.toISOString() } : {}),
      });
      form.resetFields();
      onCreated(created);
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  return (
    <Modal
      open={open}
      title={t('redemptions.createTitle')}
      onCancel={onClose}
      onOk={() => form.submit()}
      okText={t('common.create')}
      cancelText={t('common.cancel')}
      confirmLoading={create.isPending}
      okButtonProps={{ 'data-testid': 'batch-submit' } as Record<string, string>}
      destroyOnHidden
    >
      <Form<BatchForm> form={form} layout="vertical" name="batch-form" onFinish={onFinish} initialValues={{ count: 10 }}>
        <Form.Item
          name="name"
          label={t('redemptions.batchName')}
          rules={[
            { required: true, whitespace: true, message: t('validation.required') },
            { max: 64, message: t('validation.tooLong', { max: 64 }) },
          ]}
        >
          <Input />
        </Form.Item>
        <Form.Item
          name="count"
          label={t('redemptions.count')}
          rules={[
            { required: true, message: t('validation.required') },
            { type: 'number', min: 1, max: MAX_BATCH, message: t('settings.range', { min: 1, max: MAX_BATCH }) },
          ]}
        >
          <InputNumber min={1} max={MAX_BATCH} precision={0} style={{ width: '100%' }} />
        </Form.Item>
        <Form.Item
          name="quota_amount"
          label={t('redemptions.valueAmount')}
          extra={t('redemptions.valueHint')}
          rules={[
            ...decimalRules(t, true),
            {
              validator: (_, v: string | undefined) =>
                !v || (moneyInput.toUnits(v) ?? 0) > 0 ? Promise.resolve() : Promise.reject(new Error(t('redemptions.valuePositive'))),
            },
          ]}
        >
          <Input prefix={moneyInput.prefix} suffix={moneyInput.suffix} inputMode="decimal" />
        </Form.Item>
        <Form.Item
          name="expires_at"
          label={t('redemptions.expiresAt')}
          extra={t('keys.neverExpiresHint')}
          rules={[
            {
              validator: (_, value: Dayjs | null | undefined) =>
                !value || value.isAfter(dayjs()) ? Promise.resolve() : Promise.reject(new Error(t('validation.future'))),
            },
          ]}
        >
          <DatePicker showTime style={{ width: '100%' }} />
        </Form.Item>
      </Form>
    </Modal>
  );
}
