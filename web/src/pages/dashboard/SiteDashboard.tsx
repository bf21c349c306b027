import { Card, Col, DatePicker, Empty, Flex, Row, Statistic, Table, Typography, type TableProps } from 'antd';
import type { Dayjs } from 'dayjs';
import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useBusinessStats, useStatsOverview } from '../../api/stats';
import type { ChannelStats, ModelStats, UserStats } from '../../api/types';
import { QueryError } from '../../components/QueryError';
import { useFormat } from '../../lib/useFormat';
import { defaultBusinessRange, topBy, toStatsRange } from '../admin/business/business';
import { siteTotals } from './siteTotals';

const TOP = 5;

/**
 * The admin's site-wide dashboard over a picked range: every user's relayed calls (channel tests are left out
 * by the stats API), revenue, upstream cost, profit, success rate, active users and keys, the top models,
 * users and channels, and failed upstream attempts by class.
 */
export function SiteDashboard() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const [picked, setPicked] = useState<[Dayjs, Dayjs]>(() => defaultBusinessRange(7));
  const range = useMemo(() => toStatsRange(picked), [picked]);
  const days = useBusinessStats('days', range);
  const models = useBusinessStats('models', range);
  const channels = useBusinessStats('channels', range);
  const users = useBusinessStats('users', range, { limit: TOP });
  const overview = useStatsOverview(range);
  const totals = siteTotals(days.data?.items);
  const loading = days.isPending;

  const cards = [
    { key: 'revenue', title: t('site.revenue'), value: fmt.money(totals.revenue) },
    { key: 'cost', title: t('site.upstreamCost'), value: fmt.money(totals.upstream_cost) },
    { key: 'profit', title: t('site.profit'), value: fmt.money(totals.profit) },
    { key: 'requests', title: t('site.requests'), value: fmt.number(totals.requests) },
    { key: 'success', title: t('site.successRate'), value: totals.successRate === null ? t('site.noData') : fmt.percent(totals.successRate) },
    { key: 'users', title: t('site.activeUsers'), value: fmt.number(overview.data?.active_users), pending: overview.isPending },
    { key: 'keys', title: t('site.activeKeys'), value: fmt.number(overview.data?.active_keys), pending: overview.isPending },
  ];

  const money = <T,>(testId: string, key: (r: T) => string | number) => (v: number, r: T) => (
    <span data-testid={`${testId}-${key(r)}`}>{fmt.money(v)}</span>
  );
  const modelCols: TableProps<ModelStats>['columns'] = [
    { title: t('site.model'), dataIndex: 'model', key: 'model', ellipsis: true },
    { title: t('site.requests'), dataIndex: 'requests', key: 'requests', align: 'right', render: (v: number) => fmt.number(v) },
    { title: t('site.revenue'), dataIndex: 'revenue', key: 'revenue', align: 'right', render: money('site-model-revenue', (r: ModelStats) => r.model) },
  ];
  const userCols: TableProps<UserStats>['columns'] = [
    { title: t('site.user'), key: 'user', ellipsis: true, render: (_, r) => r.username || `#${r.user_id}` },
    { title: t('site.requests'), dataIndex: 'requests', key: 'requests', align: 'right', render: (v: number) => fmt.number(v) },
    { title: t('site.revenue'), dataIndex: 'revenue', key: 'revenue', align: 'right', render: money('site-user-revenue', (r: UserStats) => r.user_id) },
  ];
  const channelCols: TableProps<ChannelStats>['columns'] = [
    { title: t('site.channel'), key: 'name', ellipsis: true, render: (_, r) => r.name || `#${r.channel_id}` },
    { title: t('site.requests'), dataIndex: 'requests', key: 'requests', align: 'right', render: (v: number) => fmt.number(v) },
    {
      title: t('site.successRate'),
      dataIndex: 'success_rate',
      key: 'success_rate',
      align: 'right',
      responsive: ['sm'],
      render: (v: number, r) => (r.requests > 0 ? fmt.percent(v) : t('site.noData')),
    },
    { title: t('site.profit'), dataIndex: 'profit', key: 'profit', align: 'right', render: money('site-channel-profit', (r: ChannelStats) => r.channel_id) },
  ];
  const errorCols: TableProps<{ class: string; count: number }>['columns'] = [
    { title: t('site.errorClass'), dataIndex: 'class', key: 'class', render: (c: string) => t(`site.class_${c}`, { defaultValue: c }) },
    { title: t('site.attempts'), dataIndex: 'count', key: 'count', align: 'right', render: (v: number) => fmt.number(v) },
  ];
  const table = <T extends object>(
    title: string,
    testId: string,
    rowKey: keyof T & string,
    columns: TableProps<T>['columns'],
    data: T[],
    pending: boolean,
  ) => (
    <Col xs={24} lg={12}>
      <Card size="small" title={<h3 className="tg-card-title">{title}</h3>}>
        <Table<T>
          size="small"
          rowKey={rowKey}
          columns={columns}
          dataSource={data}
          loading={pending}
          pagination={false}
          data-testid={testId}
          locale={{ emptyText: <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('site.noData')} /> }}
        />
      </Card>
    </Col>
  );
  const error = days.error ?? models.error ?? channels.error ?? users.error ?? overview.error;

  return (
    <section aria-labelledby="site-dashboard-title" data-testid="site-dashboard" style={{ marginBottom: 24 }}>
      <Flex justify="space-between" align="center" wrap gap={12} style={{ marginBottom: 12 }}>
        <Typography.Title level={2} id="site-dashboard-title" style={{ margin: 0, fontSize: 18 }}>
          {t('site.title')}
        </Typography.Title>
        <DatePicker.RangePicker
          allowClear={false}
          value={picked}
          aria-label={t('site.range')}
          onChange={(v) => {
            if (v?.[0] && v[1]) setPicked([v[0], v[1]]);
          }}
          presets={[1, 7, 30, 90].map((n) => ({ label: t('site.lastDays', { count: n }), value: defaultBusinessRange(n) }))}
          data-testid="site-range"
        />
      </Flex>
      <Typography.Paragraph type="secondary">{t('site.hint')}</Typography.Paragraph>
      {error ? <QueryError error={error} onRetry={() => void Promise.all([days.refetch(), overview.refetch()])} /> : null}
      <Row gutter={[12, 12]}>
        {cards.map((card) => (
          <Col key={card.key} xs={12} md={6} xl={3}>
            <Card size="small" data-testid={`site-${card.key}`}>
              <Statistic title={card.title} value={card.value} loading={card.pending ?? loading} />
            </Card>
          </Col>
        ))}
      </Row>
      <Row gutter={[12, 12]} style={{ marginTop: 12 }}>
        {table(t('site.topModels'), 'site-top-models', 'model', modelCols, topBy(models.data?.items, TOP), models.isPending)}
        {table(t('site.topUsers'), 'site-top-users', 'user_id', userCols, topBy(users.data?.items, TOP), users.isPending)}
        {table(t('site.topChannels'), 'site-top-channels', 'channel_id', channelCols, topBy(channels.data?.items, TOP), channels.isPending)}
        {table(t('site.errors'), 'site-errors', 'class', errorCols, overview.data?.errors ?? [], overview.isPending)}
      </Row>
    </section>
  );
}
