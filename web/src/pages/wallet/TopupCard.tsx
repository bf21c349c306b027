import { App, Button, Card, Descriptions, Empty, Flex, Form, Input, Radio, Skeleton, Typography } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useCreateTopup, useTopupOptions } from '../../api/wallet';
import type { PaymentProvider } from '../../api/types';
import { QueryError } from '../../components/QueryError';
import { useFormat } from '../../lib/useFormat';
import { amountProblem, quoteTopup } from './walletLogic';

/** Where the browser goes to pay; a seam so tests can watch the redirect. */
export const payRedirect = { go: (url: string) => window.location.assign(url) };

/** Pick a provider, a method and an amount; see what it buys (bonus included); go pay. */
export function TopupCard() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { message } = App.useApp();
  const options = useTopupOptions();
  const create = useCreateTopup();
  const [providerName, setProviderName] = useState<PaymentProvider | null>(null);
  const [method, setMethod] = useState<string | null>(null);
  const [amount, setAmount] = useState('');

  const providers = options.data?.providers ?? [];
  const provider = providers.find((p) => p.name === providerName) ?? providers[0];
  const methods = provider?.methods ?? [];
  const chosenMethod = method && methods.includes(method) ? method : (methods[0] ?? null);
  const presets = options.data?.presets ?? [];
  const problem = provider && amount.trim() ? amountProblem(amount, provider) : null;
  const quote = provider && amount.trim() && !problem ? quoteTopup(amount, provider, options.data?.bonus ?? []) : null;

  const onPay = async () => {
    if (!provider || !quote) return;
    try {
      const order = await create.mutateAsync({
        provider: provider.name,
        method: chosenMethod ?? undefined,
        amount: amount.trim(),
      });
      payRedirect.go(order.pay_url);
    } catch (err) {
      message.error(err instanceof Error ? err.message : String(err));
    }
  };

  const methodLabel = (m: string) => t(`wallet.method_${m}`, { defaultValue: m });

  return (
    <Card title={t('wallet.topup')} data-testid="topup-card">
      {options.error ? <QueryError error={options.error} onRetry={() => void options.refetch()} /> : null}
      {options.isPending ? (
        <Skeleton active />
      ) : !provider ? (
        <Empty description={t('wallet.noProviders')} />
      ) : (
        <Form layout="vertical" name="topup" onFinish={() => void onPay()}>
          {providers.length > 1 ? (
            <Form.Item label={t('wallet.provider')}>
              <Radio.Group
                aria-label={t('wallet.provider')}
                value={provider.name}
                onChange={(e) => setProviderName(e.target.value as PaymentProvider)}
                options={providers.map((p) => ({ value: p.name, label: t(`wallet.provider_${p.name}`) }))}
                optionType="button"
              />
            </Form.Item>
          ) : null}
          {methods.length > 0 ? (
            <Form.Item label={t('wallet.method')}>
              <Radio.Group
                aria-label={t('wallet.method')}
                value={chosenMethod}
                onChange={(e) => setMethod(e.target.value as string)}
                options={methods.map((m) => ({ value: m, label: methodLabel(m) }))}
                optionType="button"
              />
            </Form.Item>
          ) : null}
          {presets.length > 0 ? (
            <Form.Item label={t('wallet.presets')}>
              <Flex wrap gap={8} role="group" aria-label={t('wallet.presets')}>
                {presets.map((p) => (
                  <Button
                    key={p}
                    type={amount.trim() === p ? 'primary' : 'default'}
                    onClick={() => setAmount(p)}
                    data-testid={`preset-${p}`}
                  >
                    {fmt.amount(p, provider.currency)}
                  </Button>
                ))}
              </Flex>
            </Form.Item>
          ) : null}
          <Form.Item
            label={t('wallet.amount', { currency: provider.currency })}
            htmlFor="topup_amount"
            validateStatus={problem ? 'error' : undefined}
            help={problem ? t(`wallet.${problem.key}`, problem.values) : t('wallet.amountRange', { min: provider.min_amount, max: provider.max_amount })}
          >
            <Input
              id="topup_amount"
              inputMode="decimal"
              value={amount}
              onChange={(e) => setAmount(e.target.value)}
              placeholder={presets[0] ?? provider.min_amount}
              suffix={provider.currency}
            />
          </Form.Item>
          {quote ? (
            <Descriptions size="small" column={1} bordered style={{ marginBottom: 16 }} styles={{ label: { whiteSpace: 'nowrap' } }} data-testid="topup-quote">
              <Descriptions.Item label={t('wallet.youPay')}>{fmt.amount(amount.trim(), provider.currency)}</Descriptions.Item>
              <Descriptions.Item label={t('wallet.youGet')}>
                <Typography.Text strong data-testid="topup-quote-total">
                  {fmt.money(quote.total)}
                </Typography.Text>
                {quote.bonus > 0 ? (
                  <Typography.Text type="success" style={{ marginInlineStart: 8 }}>
                    {t('wallet.bonusIncluded', { bonus: fmt.money(quote.bonus), percent: quote.percent })}
                  </Typography.Text>
                ) : null}
              </Descriptions.Item>
            </Descriptions>
          ) : null}
          <Button type="primary" htmlType="submit" disabled={!quote} loading={create.isPending} data-testid="topup-pay" block>
            {t('wallet.pay')}
          </Button>
        </Form>
      )}
    </Card>
  );
}
