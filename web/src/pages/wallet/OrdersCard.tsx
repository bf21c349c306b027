import { Card, Typography, type TableProps } from 'antd';
import { ResponsiveTable } from '../../components/ResponsiveTable';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useMyTopups } from '../../api/wallet';
import type { TopupOrder } from '../../api/types';
import { QueryError } from '../../components/QueryError';
import { formatTime } from '../../lib/format';
import { useFormat } from '../../lib/useFormat';
import { OrderStatus } from './OrderStatus';
import { usePaging } from '../../lib/usePaging';

/** The caller's top-up orders, newest first. */
export function OrdersCard() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { page, size, pagination } = usePaging(10, false);
  const orders = useMyTopups({ page, size });

  const columns: TableProps<TopupOrder>['columns'] = [
    {
      title: t('orders.orderNo'),
      dataIndex: 'order_no',
      key: 'order_no',
      render: (v: string) => (
        <Typography.Text className="tg-mono" copyable={{ text: v }}>
          <Link to={`/console/wallet/return?order=${encodeURIComponent(v)}`}>{v}</Link>
        </Typography.Text>
      ),
    },
    { title: t('orders.amount'), key: 'amount', render: (_, o) => fmt.amount(o.amount, o.currency) },
    { title: t('orders.quota'), dataIndex: 'quota', key: 'quota', render: (v: number) => fmt.money(v) },
    { title: t('common.status'), dataIndex: 'status', key: 'status', render: (v: string) => <OrderStatus status={v} /> },
    {
      title: t('orders.provider'),
      key: 'provider',
      responsive: ['md'],
      render: (_, o) => [t(`wallet.provider_${o.provider}`, { defaultValue: o.provider }), o.method ? t(`wallet.method_${o.method}`, { defaultValue: o.method }) : null].filter(Boolean).join(' · '),
    },
    { title: t('orders.createdAt'), dataIndex: 'created_at', key: 'created', responsive: ['lg'], render: (v?: string) => formatTime(v) },
    { title: t('orders.paidAt'), dataIndex: 'paid_at', key: 'paid', responsive: ['lg'], render: (v?: string | null) => formatTime(v) || t('common.none') },
  ];

  return (
    <Card title={t('wallet.orders')}>
      {orders.error ? <QueryError error={orders.error} onRetry={() => void orders.refetch()} /> : null}
      <ResponsiveTable<TopupOrder>
        cardTitle={t('wallet.orders')}
        rowKey="order_no"
        size="small"
        columns={columns}
        dataSource={orders.data?.items ?? []}
        loading={orders.isFetching}
        locale={{ emptyText: t('wallet.noOrders') }}
        pagination={pagination(orders.data?.total)}
      />
    </Card>
  );
}
