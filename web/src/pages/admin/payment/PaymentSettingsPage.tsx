import { DeleteOutlined, PlusOutlined } from '@ant-design/icons';
import { App, Button, Card, Col, Flex, Form, Input, InputNumber, Row, Select, Skeleton, Switch } from 'antd';
import type { Rule } from 'antd/es/form';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useSaveSettings, useSettings } from '../../../api/settings';
import { PageHeader } from '../../../components/PageHeader';
import { QueryError } from '../../../components/QueryError';
import { isDecimal } from '../../../lib/money';
import { useFormat } from '../../../lib/useFormat';
import { ApiError } from '../../../api/client';
import { decimalRules } from '../../../lib/validation';
import { fieldPath, toPaymentBody, toPaymentForm, type PaymentForm } from './paymentForm';

const CURRENCY = /^[A-Za-z]{3}$/;

/** Top-up providers, presets and bonus tiers, invite rewards, the display currency and the per-IP limit. */
export default function PaymentSettingsPage() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const { moneyInput } = useFormat();
  const settings = useSettings();
  const save = useSaveSettings();
  const [form] = Form.useForm<PaymentForm>();
  const displayCurrency = Form.useWatch('display_currency', form);

  useEffect(() => {
    if (settings.data) form.setFieldsValue(toPaymentForm(settings.data, moneyInput.toText));
    // moneyInput changes identity every render; refill only when the settings change.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [settings.data, form]);

  const onFinish = async (values: PaymentForm) => {
    if (!settings.data) return;
    const body = toPaymentBody(values, settings.data, moneyInput.toUnits);
    if (Object.keys(body).length === 0) {
      message.info(t('settings.unchanged'));
      return;
    }
    try {
      await save.mutateAsync(body);
      message.success(t('common.saved'));
    } catch (err) {
      const path = err instanceof ApiError ? fieldPath(err.field) : null;
      if (path && path[1] !== 'bonus') {
        const name = path as Parameters<typeof form.scrollToField>[0];
        form.setFields([{ name, errors: [(err as ApiError).message] }]);
        form.scrollToField(name);
      }
      message.error(err instanceof Error ? err.message : String(err));
    }
  };

  const required = { required: true, message: t('validation.required') };
  const currencyRules: Rule[] = [required, { pattern: CURRENCY, message: t('payment.currencyCode') }];
  const positiveDecimal: Rule[] = [
    ...decimalRules(t, true),
    { validator: (_, v: string) => (!v || !isDecimal(v) || Number(v) > 0 ? Promise.resolve() : Promise.reject(new Error(t('payment.positive')))) },
  ];
  const urlRule: Rule = { type: 'url', message: t('validation.url') };

  const limits = (provider: 'epay' | 'stripe') => (
    <Row gutter={12}>
      <Col xs={24} sm={8}>
        <Form.Item name={['payment', provider, 'currency']} label={t('payment.currency')} rules={currencyRules}>
          <Input maxLength={3} />
        </Form.Item>
      </Col>
      <Col xs={24} sm={16}>
        <Form.Item name={['payment', provider, 'rate']} label={t('payment.rate')} extra={t('payment.rateHint')} rules={positiveDecimal}>
          <Input inputMode="decimal" />
        </Form.Item>
      </Col>
      <Col xs={12}>
        <Form.Item name={['payment', provider, 'min_amount']} label={t('payment.minAmount')} rules={decimalRules(t, true)}>
          <Input inputMode="decimal" />
        </Form.Item>
      </Col>
      <Col xs={12}>
        <Form.Item name={['payment', provider, 'max_amount']} label={t('payment.maxAmount')} rules={decimalRules(t, true)}>
          <Input inputMode="decimal" />
        </Form.Item>
      </Col>
    </Row>
  );

  return (
    <>
      <PageHeader
        title={t('payment.title')}
        extra={
          <Button type="primary" onClick={() => form.submit()} loading={save.isPending} disabled={!settings.data} data-testid="payment-save">
            {t('common.save')}
          </Button>
        }
      />
      {settings.error ? <QueryError error={settings.error} onRetry={() => void settings.refetch()} /> : null}
      {settings.isPending ? (
        <Skeleton active />
      ) : (
        <Form<PaymentForm> form={form} layout="vertical" onFinish={onFinish} name="payment-form">
          <Row gutter={[16, 16]}>
            <Col xs={24} lg={12}>
              <Card title={t('payment.epay')}>
                <Form.Item name={['payment', 'epay', 'enabled']} label={t('payment.enabled')} valuePropName="checked">
                  <Switch />
                </Form.Item>
                <Form.Item name={['payment', 'epay', 'gateway_url']} label={t('payment.gatewayUrl')} extra={t('payment.gatewayUrlHint')} rules={[urlRule]}>
                  <Input />
                </Form.Item>
                <Form.Item name={['payment', 'epay', 'pid']} label={t('payment.pid')}>
                  <Input autoComplete="off" />
                </Form.Item>
                <Form.Item name={['payment', 'epay', 'key']} label={t('payment.epayKey')} extra={t('payment.secretHint')}>
                  <Input.Password autoComplete="new-password" />
                </Form.Item>
                <Form.Item name={['payment', 'epay', 'methods']} label={t('payment.methods')} extra={t('payment.methodsHint')}>
                  <Select
                    mode="tags"
                    tokenSeparators={[',', ' ']}
                    options={['alipay', 'wxpay', 'qqpay'].map((m) => ({ value: m, label: t(`wallet.method_${m}`) }))}
                  />
                </Form.Item>
                {limits('epay')}
              </Card>
            </Col>
            <Col xs={24} lg={12}>
              <Card title={t('payment.stripe')}>
                <Form.Item name={['payment', 'stripe', 'enabled']} label={t('payment.enabled')} valuePropName="checked">
                  <Switch />
                </Form.Item>
                <Form.Item name={['payment', 'stripe', 'secret_key']} label={t('payment.stripeSecret')} extra={t('payment.secretHint')}>
                  <Input.Password autoComplete="new-password" />
                </Form.Item>
                <Form.Item name={['payment', 'stripe', 'webhook_secret']} label={t('payment.webhookSecret')} extra={t('payment.secretHint')}>
                  <Input.Password autoComplete="new-password" />
                </Form.Item>
                {limits('stripe')}
              </Card>
            </Col>
            <Col xs={24} lg={12}>
              <Card title={t('payment.orders')}>
                <Form.Item
                  name={['payment', 'presets']}
                  label={t('payment.presets')}
                  extra={t('payment.presetsHint')}
                  rules={[
                    {
                      validator: (_, v: string[] | undefined) => {
                        const bad = (v ?? []).find((x) => !isDecimal(x.trim()) || Number(x) <= 0);
                        return bad ? Promise.reject(new Error(t('payment.badPreset', { value: bad }))) : Promise.resolve();
                      },
                    },
                  ]}
                >
                  <Select mode="tags" tokenSeparators={[',', ' ']} open={false} suffixIcon={null} />
                </Form.Item>
                <Form.Item label={t('payment.bonus')} extra={t('payment.bonusHint')}>
                  <Form.List name={['payment', 'bonus']}>
                    {(fields, { add, remove }) => (
                      <>
                        {fields.map((field) => (
                          <Flex key={field.key} gap={8} align="start">
                            <Form.Item name={[field.name, 'min_amount']} rules={decimalRules(t, true)} style={{ flex: 1 }}>
                              <Input aria-label={t('payment.bonusMin')} placeholder={t('payment.bonusMin')} inputMode="decimal" />
                            </Form.Item>
                            <Form.Item name={[field.name, 'percent']} rules={positiveDecimal} style={{ flex: 1 }}>
                              <Input aria-label={t('payment.bonusPercent')} placeholder={t('payment.bonusPercent')} inputMode="decimal" suffix="%" />
                            </Form.Item>
                            <Button type="text" danger aria-label={t('common.remove')} icon={<DeleteOutlined />} onClick={() => remove(field.name)} />
                          </Flex>
                        ))}
                        <Button type="dashed" icon={<PlusOutlined />} onClick={() => add({ min_amount: '', percent: '' })} block>
                          {t('payment.addTier')}
                        </Button>
                      </>
                    )}
                  </Form.List>
                </Form.Item>
                <Form.Item
                  name={['payment', 'order_ttl_minutes']}
                  label={t('payment.orderTtl')}
                  rules={[required, { type: 'number', min: 1, max: 10080, message: t('settings.range', { min: 1, max: 10080 }) }]}
                >
                  <InputNumber min={1} max={10080} precision={0} suffix={t('payment.minutes')} style={{ width: '100%' }} />
                </Form.Item>
              </Card>
            </Col>
            <Col xs={24} lg={12}>
              <Card title={t('payment.invite')}>
                <Form.Item name={['invite', 'inviter_reward_amount']} label={t('payment.inviterReward')} extra={t('payment.zeroOff')} rules={decimalRules(t)}>
                  <Input prefix={moneyInput.prefix} suffix={moneyInput.suffix} inputMode="decimal" />
                </Form.Item>
                <Form.Item name={['invite', 'invitee_reward_amount']} label={t('payment.inviteeReward')} extra={t('payment.zeroOff')} rules={decimalRules(t)}>
                  <Input prefix={moneyInput.prefix} suffix={moneyInput.suffix} inputMode="decimal" />
                </Form.Item>
                <Form.Item
                  name={['invite', 'first_topup_percent']}
                  label={t('payment.firstTopupPercent')}
                  extra={t('payment.firstTopupPercentHint')}
                  rules={decimalRules(t)}
                >
                  <Input suffix="%" inputMode="decimal" />
                </Form.Item>
              </Card>
              <Card title={t('payment.display')} style={{ marginTop: 16 }}>
                <Form.Item name="display_currency" label={t('payment.displayCurrency')} extra={t('payment.displayCurrencyHint')}>
                  <Select
                    options={(['USD', 'CNY', 'units'] as const).map((c) => ({ value: c, label: t(`payment.display_${c}`) }))}
                  />
                </Form.Item>
                {displayCurrency === 'CNY' ? (
                  <Form.Item name="display_rate" label={t('payment.displayRate')} rules={positiveDecimal}>
                    <Input inputMode="decimal" />
                  </Form.Item>
                ) : null}
                <Form.Item
                  name="ip_rpm"
                  label={t('payment.ipRpm')}
                  extra={t('payment.ipRpmHint')}
                  rules={[{ type: 'number', min: 0, message: t('settings.range', { min: 0, max: 1000000 }) }]}
                >
                  <InputNumber min={0} precision={0} style={{ width: '100%' }} />
                </Form.Item>
              </Card>
            </Col>
          </Row>
        </Form>
      )}
    </>
  );
}
