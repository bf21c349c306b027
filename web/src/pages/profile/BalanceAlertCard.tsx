import { App, Button, Card, Form, Input, Typography } from 'antd';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useUpdateSelf } from '../../api/auth';
import { useSession } from '../../auth/SessionProvider';
import { useFormat } from '../../lib/useFormat';
import { applyServerError, decimalRules } from '../../lib/validation';

/** The user's low-balance e-mail: sent once when the balance falls below the threshold (empty or 0 = off). */
export function BalanceAlertCard() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const { moneyInput, money } = useFormat();
  const { user } = useSession();
  const update = useUpdateSelf();
  const [form] = Form.useForm<{ amount: string }>();
  const stored = user?.balance_alert ?? 0;

  useEffect(() => {
    form.setFieldsValue({ amount: stored > 0 ? moneyInput.toText(stored) : '' });
    // moneyInput changes identity every render; refill only when the stored value changes.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [stored, form]);

  const onFinish = async ({ amount }: { amount: string }) => {
    const units = moneyInput.toUnits(amount?.trim() || '0') ?? 0;
    try {
      await update.mutateAsync({ balance_alert: units });
      message.success(t('common.saved'));
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  return (
    <Card title={t('balanceAlert.title')}>
      <Typography.Paragraph type="secondary">{t('balanceAlert.hint')}</Typography.Paragraph>
      <Typography.Paragraph data-testid="balance-alert-current">
        {stored > 0 ? t('balanceAlert.current', { amount: money(stored) }) : t('balanceAlert.off')}
      </Typography.Paragraph>
      {!user?.email ? <Typography.Paragraph type="warning">{t('balanceAlert.noEmail')}</Typography.Paragraph> : null}
      <Form form={form} layout="vertical" onFinish={onFinish} name="balance-alert">
        <Form.Item name="amount" label={t('balanceAlert.threshold')} extra={t('balanceAlert.thresholdHint')} rules={decimalRules(t)}>
          <Input prefix={moneyInput.prefix} suffix={moneyInput.suffix} inputMode="decimal" />
        </Form.Item>
        <Button type="primary" htmlType="submit" loading={update.isPending}>
          {t('common.save')}
        </Button>
      </Form>
    </Card>
  );
}
