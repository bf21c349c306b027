import { Button, Card, Descriptions, Result, Spin } from 'antd';
import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useSearchParams } from 'react-router';
import { useSelf } from '../../api/auth';
import { isFinalStatus, useInvalidateBalance, useMyTopup } from '../../api/wallet';
import { PageHeader } from '../../components/PageHeader';
import { QueryError } from '../../components/QueryError';
import { formatTime } from '../../lib/format';
import { useFormat } from '../../lib/useFormat';
import { OrderStatus } from './OrderStatus';
import { returnedOrder } from './walletLogic';

const RESULT: Record<string, 'success' | 'error' | 'warning' | 'info'> = { paid: 'success', failed: 'error', expired: 'warning' };

/** Where the payment provider sends the browser back: polls the order until it is paid, failed or expired. */
export default function WalletReturnPage() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const [search] = useSearchParams();
  const orderNo = returnedOrder(search);
  const order = useMyTopup(orderNo);
  const self = useSelf();
  const invalidate = useInvalidateBalance();
  const status = order.data?.status;
  const refreshed = useRef(false);

  // Once the order settles, fetch the balance again so every page shows it without a reload.
  useEffect(() => {
    if (isFinalStatus(status) && !refreshed.current) {
      refreshed.current = true;
      void invalidate();
    }
  }, [status, invalidate]);

  const title = !orderNo
    ? t('wallet.returnNoOrder')
    : status
      ? t(`wallet.return_${status}`, { defaultValue: status })
      : t('wallet.returnChecking');

  return (
    <>
      <PageHeader title={t('wallet.returnTitle')} />
      {order.error ? <QueryError error={order.error} onRetry={() => void order.refetch()} /> : null}
      <Card data-testid="topup-return">
        <Result
          status={status ? (RESULT[status] ?? 'info') : 'info'}
          icon={status && isFinalStatus(status) ? undefined : orderNo && !order.error ? <Spin size="large" /> : undefined}
          title={<span data-testid="return-title">{title}</span>}
          subTitle={status === 'pending' ? t('wallet.returnPending') : undefined}
          extra={
            <Link to="/console/wallet">
              <Button type="primary">{t('wallet.backToWallet')}</Button>
            </Link>
          }
        />
        {order.data ? (
          <Descriptions bordered size="small" column={1}>
            <Descriptions.Item label={t('orders.orderNo')}>
              <span className="tg-mono">{order.data.order_no}</span>
            </Descriptions.Item>
            <Descriptions.Item label={t('common.status')}>
              <OrderStatus status={order.data.status} />
            </Descriptions.Item>
            <Descriptions.Item label={t('orders.amount')}>{fmt.amount(order.data.amount, order.data.currency)}</Descriptions.Item>
            <Descriptions.Item label={t('orders.quota')}>{fmt.money(order.data.quota)}</Descriptions.Item>
            {order.data.paid_at ? <Descriptions.Item label={t('orders.paidAt')}>{formatTime(order.data.paid_at)}</Descriptions.Item> : null}
            {status === 'paid' ? (
              <Descriptions.Item label={t('dashboard.balance')}>
                <span data-testid="return-balance">{self.isFetching ? <Spin size="small" /> : fmt.money(self.data?.quota)}</span>
              </Descriptions.Item>
            ) : null}
          </Descriptions>
        ) : null}
      </Card>
    </>
  );
}
