import { Input, Table, Typography, type TableProps } from 'antd';
import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { usePricing } from '../../api/pricing';
import type { EffectivePrice } from '../../api/types';
import { PageHeader } from '../../components/PageHeader';
import { QueryError } from '../../components/QueryError';
import { useFormat } from '../../lib/useFormat';

/** Models the caller may use, with prices after their group ratio. */
export default function PricingPage() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const pricing = usePricing();
  const [q, setQ] = useState('');
  const rows = useMemo(
    () => (pricing.data ?? []).filter((p) => p.model.toLowerCase().includes(q.toLowerCase())),
    [pricing.data, q],
  );
  const perCall = (row: EffectivePrice) => Number(row.per_call || 0) !== 0;

  const columns: TableProps<EffectivePrice>['columns'] = [
    {
      title: t('pricing.model'),
      dataIndex: 'model',
      key: 'model',
      sorter: (a, b) => a.model.localeCompare(b.model),
      render: (m: string) => <Typography.Text copyable>{m}</Typography.Text>,
    },
    { title: t('pricing.input'), key: 'input', render: (_, r) => (perCall(r) ? t('common.none') : fmt.price(r.input)) },
    { title: t('pricing.output'), key: 'output', render: (_, r) => (perCall(r) ? t('common.none') : fmt.price(r.output)) },
    {
      title: t('pricing.cacheRead'),
      key: 'cache_read',
      responsive: ['md'],
      render: (_, r) => (perCall(r) ? t('common.none') : fmt.price(r.cache_read)),
    },
    {
      title: t('pricing.cacheWrite'),
      key: 'cache_write',
      responsive: ['md'],
      render: (_, r) => (perCall(r) ? t('common.none') : fmt.price(r.cache_write)),
    },
    { title: t('pricing.perCall'), key: 'per_call', render: (_, r) => (perCall(r) ? fmt.price(r.per_call) : t('common.none')) },
    { title: t('pricing.groupRatio'), dataIndex: 'group_ratio', key: 'ratio', render: (v: string) => `×${v || '1'}` },
  ];

  return (
    <>
      <PageHeader
        title={t('pricing.title')}
        extra={<Input.Search allowClear placeholder={t('pricing.search')} onChange={(e) => setQ(e.target.value)} style={{ width: 220 }} />}
      />
      <Typography.Paragraph type="secondary">{t('pricing.hint')}</Typography.Paragraph>
      {pricing.error ? <QueryError error={pricing.error} onRetry={() => void pricing.refetch()} /> : null}
      <Table<EffectivePrice>
        rowKey="model"
        columns={columns}
        dataSource={rows}
        loading={pricing.isPending}
        scroll={{ x: 'max-content' }}
        locale={{ emptyText: pricing.error ? t('common.loadFailed') : t('pricing.empty') }}
        pagination={{ pageSize: 50, hideOnSinglePage: true }}
      />
    </>
  );
}
