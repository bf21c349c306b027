import { Button, Descriptions, Drawer, InputNumber, Select, Skeleton, Typography, type TableProps } from 'antd';
import { ResponsiveTable } from '../../../components/ResponsiveTable';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useAdminTopup, useAdminTopups } from '../../../api/adminMoney';
import type { PaymentProvider, TopupOrder, TopupStatus } from '../../../api/types';
import { WIDE_DRAWER } from '../../../components/drawerSize';
import { PageHeader } from '../../../components/PageHeader';
import { QueryError } from '../../../components/QueryError';
import { formatTime } from '../../../lib/format';
import { useFormat } from '../../../lib/useFormat';
import { OrderStatus } from '../../wallet/OrderStatus';
import { usePaging } from '../../../lib/usePaging';

const STATUSES: TopupStatus[] = ['pending', 'paid', 'failed', 'expired'];
const PROVIDERS: PaymentProvider[] = ['epay', 'stripe'];
/** Fields the detail drawer shows with their own label; anything else the server adds is listed after. */
const KNOWN = new Set(['order_no', 'user_id', 'username', 'provider', 'method', 'amount', 'currency', 'quota', 'bonus', 'status', 'trade_no', 'event_id', 'created_at', 'updated_at', 'paid_at', 'expires_at']);

/** Who paid: the username (from the admin API), with the user id beside it. */
function Payer({ order }: { order: TopupOrder }) {
  return (
    <span data-testid="order-payer">
      {order.username ? <Typography.Text strong>{order.username}</Typography.Text> : null}{' '}
      <Typography.Text type="secondary">#{order.user_id ?? ''}</Typography.Text>
    </span>
  );
}

function OrderDrawer({ orderNo, onClose }: { orderNo: string | null; onClose: () => void }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const order = useAdminTopup(orderNo);
  const o = order.data;
  const extra = Object.entries(o ?? {}).filter(([k, v]) => !KNOWN.has(k) && v !== null && v !== undefined && v !== '' && typeof v !== 'object');
  return (
    <Drawer open={!!orderNo} onClose={onClose} title={t('orders.detailTitle')} size={WIDE_DRAWER} destroyOnHidden>
      {order.error ? <QueryError error={order.error} onRetry={() => void order.refetch()} /> : null}
      {order.isPending ? (
        <Skeleton active />
      ) : o ? (
        <Descriptions bordered size="small" column={1} data-testid="order-detail">
          <Descriptions.Item label={t('orders.orderNo')}>
            <Typography.Text className="tg-mono" copyable>
              {o.order_no}
            </Typography.Text>
          </Descriptions.Item>
          <Descriptions.Item label={t('orders.user')}>
            <Payer order={o} />
          </Descriptions.Item>
          <Descriptions.Item label={t('common.status')}>
            <OrderStatus status={o.status} />
          </Descriptions.Item>
          <Descriptions.Item label={t('orders.provider')}>
            {t(`wallet.provider_${o.provider}`, { defaultValue: o.provider })}
            {o.method ? ` · ${t(`wallet.method_${o.method}`, { defaultValue: o.method })}` : ''}
          </Descriptions.Item>
          <Descriptions.Item label={t('orders.amount')}>{fmt.amount(o.amount, o.currency)}</Descriptions.Item>
          <Descriptions.Item label={t('orders.quota')}>{fmt.money(o.quota)}</Descriptions.Item>
          <Descriptions.Item label={t('orders.bonus')}>{fmt.money(Number(o.bonus ?? 0))}</Descriptions.Item>
          <Descriptions.Item label={t('orders.tradeNo')}>
            <span className="tg-mono">{o.trade_no || t('common.none')}</span>
          </Descriptions.Item>
          <Descriptions.Item label={t('orders.eventId')}>
            <span className="tg-mono">{String(o.event_id ?? '') || t('common.none')}</span>
          </Descriptions.Item>
          <Descriptions.Item label={t('orders.createdAt')}>{formatTime(o.created_at)}</Descriptions.Item>
          <Descriptions.Item label={t('orders.paidAt')}>{formatTime(o.paid_at) || t('common.none')}</Descriptions.Item>
          <Descriptions.Item label={t('orders.expiresAt')}>{formatTime(o.expires_at) || t('common.none')}</Descriptions.Item>
          <Descriptions.Item label={t('orders.updatedAt')}>{formatTime(String(o.updated_at ?? '')) || t('common.none')}</Descriptions.Item>
          {extra.map(([k, v]) => (
            <Descriptions.Item key={k} label={k}>
              {String(v)}
            </Descriptions.Item>
          ))}
        </Descriptions>
      ) : null}
    </Drawer>
  );
}

/** Every top-up order, filterable by status, provider and user, with a detail drawer. */
export default function OrdersPage() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { page, size, setPage, pagination } = usePaging(20);
  const [status, setStatus] = useState<TopupStatus | undefined>();
  const [provider, setProvider] = useState<PaymentProvider | undefined>();
  const [userId, setUserId] = useState<number | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const orders = useAdminTopups({ page, size, status, provider, user_id: userId ?? undefined });

  const columns: TableProps<TopupOrder>['columns'] = [
    {
      title: t('orders.orderNo'),
      dataIndex: 'order_no',
      key: 'order_no',
      render: (v: string) => (
        <Button type="link" size="small" className="tg-mono" style={{ padding: 0 }} onClick={() => setOpen(v)}>
          {v}
        </Button>
      ),
    },
    { title: t('orders.user'), key: 'user', render: (_, o) => <Payer order={o} /> },
    { title: t('orders.amount'), key: 'amount', render: (_, o) => fmt.amount(o.amount, o.currency) },
    { title: t('orders.quota'), dataIndex: 'quota', key: 'quota', render: (v: number) => fmt.money(v) },
    { title: t('common.status'), dataIndex: 'status', key: 'status', render: (v: string) => <OrderStatus status={v} /> },
    {
      title: t('orders.provider'),
      key: 'provider',
      responsive: ['md'],
      render: (_, o) => t(`wallet.provider_${o.provider}`, { defaultValue: o.provider }),
    },
    { title: t('orders.createdAt'), dataIndex: 'created_at', key: 'created', responsive: ['lg'], render: (v?: string) => formatTime(v) },
    { title: t('orders.paidAt'), dataIndex: 'paid_at', key: 'paid', responsive: ['xl'], render: (v?: string | null) => formatTime(v) || t('common.none') },
  ];

  return (
    <>
      <PageHeader
        title={t('orders.title')}
        extra={
          <>
            <Select
              allowClear
              aria-label={t('common.status')}
              placeholder={t('common.status')}
              value={status}
              onChange={(v) => {
                setStatus(v);
                setPage(1);
              }}
              options={STATUSES.map((s) => ({ value: s, label: t(`orders.status_${s}`) }))}
              style={{ width: 130 }}
            />
            <Select
              allowClear
              aria-label={t('orders.provider')}
              placeholder={t('orders.provider')}
              value={provider}
              onChange={(v) => {
                setProvider(v);
                setPage(1);
              }}
              options={PROVIDERS.map((p) => ({ value: p, label: t(`wallet.provider_${p}`) }))}
              style={{ width: 130 }}
            />
            <InputNumber
              aria-label={t('orders.userId')}
              placeholder={t('orders.userId')}
              min={1}
              precision={0}
              value={userId}
              onChange={(v) => {
                setUserId(v);
                setPage(1);
              }}
              style={{ width: 120 }}
            />
            <Button onClick={() => void orders.refetch()}>{t('common.refresh')}</Button>
          </>
        }
      />
      {orders.error ? <QueryError error={orders.error} onRetry={() => void orders.refetch()} /> : null}
      <ResponsiveTable<TopupOrder>
        cardTitle={t('orders.title')}
        rowKey="order_no"
        columns={columns}
        dataSource={orders.data?.items ?? []}
        loading={orders.isFetching}
        locale={{ emptyText: t('orders.empty') }}
        pagination={pagination(orders.data?.total)}
      />
      <OrderDrawer orderNo={open} onClose={() => setOpen(null)} />
    </>
  );
}
