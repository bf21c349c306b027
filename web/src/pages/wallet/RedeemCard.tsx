import { App, Button, Card, Form, Input } from 'antd';
import { useTranslation } from 'react-i18next';
import { useRedeem } from '../../api/wallet';
import { useFormat } from '../../lib/useFormat';
import { applyServerError } from '../../lib/validation';

/** Redeem a code bought elsewhere. */
export function RedeemCard() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { message } = App.useApp();
  const [form] = Form.useForm<{ code: string }>();
  const redeem = useRedeem();

  const onFinish = async ({ code }: { code: string }) => {
    try {
      const res = await redeem.mutateAsync(code.trim());
      message.success(t('wallet.redeemed', { amount: fmt.money(res.quota_added), balance: fmt.money(res.quota) }));
      form.resetFields();
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) form.setFields([{ name: 'code', errors: [text] }]);
    }
  };

  return (
    <Card title={t('wallet.redeem')}>
      <Form form={form} layout="vertical" name="redeem" onFinish={onFinish} requiredMark={false}>
        <Form.Item name="code" label={t('wallet.code')} rules={[{ required: true, whitespace: true, message: t('validation.required') }]}>
          <Input autoComplete="off" spellCheck={false} className="tg-mono" />
        </Form.Item>
        <Button type="primary" htmlType="submit" loading={redeem.isPending} data-testid="redeem-submit" block>
          {t('wallet.redeemAction')}
        </Button>
      </Form>
    </Card>
  );
}
