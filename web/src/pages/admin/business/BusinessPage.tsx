import { Card, Col, DatePicker, Empty, Row, Skeleton, Statistic, Table, Typography, type TableProps } from 'antd';
import type { Dayjs } from 'dayjs';
import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useBusinessStats } from '../../../api/stats';
import type { ChannelStats, DayStats, ModelStats, UserStats } from '../../../api/types';
import { SeriesChart, type ChartSeries } from '../../../components/Chart';
import { PageHeader } from '../../../components/PageHeader';
import { QueryError } from '../../../components/QueryError';
import { UNITS_PER_USD } from '../../../lib/money';
import { useFormat } from '../../../lib/useFormat';
import { defaultBusinessRange, figureSorter, topBy, toStatsRange, totalsOf } from './business';

const TOP = 10;

/** Revenue, upstream cost and profit over a date range: per day, top models and users, and per channel. */
export default function BusinessPage() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const [picked, setPicked] = useState<[Dayjs, Dayjs]>(() => defaultBusinessRange());
  const range = useMemo(() => toStatsRange(picked), [picked]);
  const channels = useBusinessStats('channels', range);
  const models = useBusinessStats('models', range);
  const days = useBusinessStats('days', range);
  const users = useBusinessStats('users', range, { limit: TOP });

  const totals = totalsOf(channels.data?.items);
  const money = (units: number) => fmt.money(units);
  const chartMoney = (usd: number) => fmt.money(usd * UNITS_PER_USD);
  const moneyCell = (testId: string) => (v: number, row: { channel_id?: number }) => (
    <Typography.Text type={v < 0 ? 'danger' : undefined} data-testid={row.channel_id !== undefined ? `${testId}-${row.channel_id}` : undefined}>
      {money(v)}
    </Typography.Text>
  );

  const dayItems: DayStats[] = days.data?.items ?? [];
  const perDay: ChartSeries[] = [
    { name: t('business.revenue'), kind: 'line', values: dayItems.map((d) => d.revenue / UNITS_PER_USD) },
    { name: t('business.upstreamCost'), kind: 'line', values: dayItems.map((d) => d.upstream_cost / UNITS_PER_USD) },
    { name: t('business.profit'), kind: 'bar', values: dayItems.map((d) => d.profit / UNITS_PER_USD) },
  ];
  const bars = (label: string, names: string[], rows: { revenue: number; upstream_cost: number; profit: number }[]) => (
    <SeriesChart
      label={label}
      categories={names}
      format={chartMoney}
      horizontal
      series={[
        { name: t('business.revenue'), kind: 'bar', values: rows.map((r) => r.revenue / UNITS_PER_USD) },
        { name: t('business.upstreamCost'), kind: 'bar', values: rows.map((r) => r.upstream_cost / UNITS_PER_USD) },
        { name: t('business.profit'), kind: 'bar', values: rows.map((r) => r.profit / UNITS_PER_USD) },
      ]}
    />
  );
  const topModels: ModelStats[] = topBy(models.data?.items, TOP);
  const topUsers: UserStats[] = topBy(users.data?.items, TOP);

  const columns: TableProps<ChannelStats>['columns'] = [
    {
      title: t('business.channel'),
      key: 'name',
      fixed: 'left',
      sorter: (a, b) => a.name.localeCompare(b.name),
      render: (_, r) => <span data-testid={`biz-channel-${r.channel_id}`}>{r.name || `#${r.channel_id}`}</span>,
    },
    { title: t('business.requests'), dataIndex: 'requests', key: 'requests', sorter: figureSorter('requests'), render: (v: number) => fmt.number(v) },
    {
      title: t('business.successRate'),
      dataIndex: 'success_rate',
      key: 'success_rate',
      sorter: figureSorter('success_rate'),
      render: (v: number, r) => (r.requests > 0 ? fmt.percent(v) : t('common.none')),
    },
    { title: t('business.p50'), dataIndex: 'p50_ms', key: 'p50', sorter: figureSorter('p50_ms'), render: (v: number) => fmt.duration(v) },
    { title: t('business.p95'), dataIndex: 'p95_ms', key: 'p95', sorter: figureSorter('p95_ms'), render: (v: number) => fmt.duration(v) },
    {
      title: t('business.firstByteP50'),
      dataIndex: 'first_byte_p50_ms',
      key: 'first_byte',
      responsive: ['xl'],
      sorter: figureSorter('first_byte_p50_ms'),
      render: (v: number) => fmt.duration(v),
    },
    {
      title: t('business.promptTokens'),
      dataIndex: 'prompt_tokens',
      key: 'prompt_tokens',
      sorter: figureSorter('prompt_tokens'),
      render: (v: number) => fmt.number(v),
    },
    {
      title: t('business.completionTokens'),
      dataIndex: 'completion_tokens',
      key: 'completion_tokens',
      sorter: figureSorter('completion_tokens'),
      render: (v: number) => fmt.number(v),
    },
    {
      title: t('business.revenue'),
      dataIndex: 'revenue',
      key: 'revenue',
      sorter: figureSorter('revenue'),
      defaultSortOrder: 'descend',
      render: moneyCell('biz-revenue'),
    },
    { title: t('business.upstreamCost'), dataIndex: 'upstream_cost', key: 'upstream_cost', sorter: figureSorter('upstream_cost'), render: moneyCell('biz-cost') },
    { title: t('business.profit'), dataIndex: 'profit', key: 'profit', sorter: figureSorter('profit'), render: moneyCell('biz-profit') },
  ];

  const cards = [
    { key: 'revenue', title: t('business.revenue'), value: money(totals.revenue) },
    { key: 'cost', title: t('business.upstreamCost'), value: money(totals.upstream_cost) },
    { key: 'profit', title: t('business.profit'), value: money(totals.profit) },
    { key: 'margin', title: t('business.margin'), value: totals.margin === null ? t('common.none') : fmt.percent(totals.margin) },
    { key: 'requests', title: t('business.requests'), value: fmt.number(totals.requests) },
  ];
  const error = channels.error ?? days.error ?? models.error ?? users.error;
  const retry = () => {
    void channels.refetch();
    void days.refetch();
    void models.refetch();
    void users.refetch();
  };
  const noData = !channels.isPending && (channels.data?.items ?? []).length === 0;

  return (
    <>
      <PageHeader
        title={t('business.title')}
        extra={
          <DatePicker.RangePicker
            allowClear={false}
            value={picked}
            onChange={(v) => {
              if (v?.[0] && v[1]) setPicked([v[0], v[1]]);
            }}
            presets={[7, 30, 90].map((n) => ({ label: t('business.lastDays', { count: n }), value: defaultBusinessRange(n) }))}
            data-testid="business-range"
          />
        }
      />
      <Typography.Paragraph type="secondary">{t('business.hint')}</Typography.Paragraph>
      {error ? <QueryError error={error} onRetry={retry} /> : null}
      <Row gutter={[16, 16]}>
        {cards.map((card) => (
          <Col key={card.key} xs={12} md={8} xl={4}>
            <Card size="small" data-testid={`biz-total-${card.key}`}>
              <Statistic title={card.title} value={card.value} loading={channels.isPending} />
            </Card>
          </Col>
        ))}
      </Row>
      <Row gutter={[16, 16]} style={{ marginTop: 16 }}>
        <Col xs={24}>
          <Card title={t('business.perDay')} size="small">
            {days.isPending ? <Skeleton active /> : noData ? <Empty description={t('business.noData')} /> : (
              <SeriesChart label={t('business.perDay')} categories={dayItems.map((d) => d.date.slice(5))} format={chartMoney} series={perDay} />
            )}
          </Card>
        </Col>
        <Col xs={24} xl={12}>
          <Card title={t('business.topModels')} size="small">
            {models.isPending ? (
              <Skeleton active />
            ) : topModels.length === 0 ? (
              <Empty description={t('business.noData')} />
            ) : (
              bars(t('business.topModels'), topModels.map((m) => m.model), topModels)
            )}
          </Card>
        </Col>
        <Col xs={24} xl={12}>
          <Card title={t('business.topUsers')} size="small">
            {users.isPending ? (
              <Skeleton active />
            ) : topUsers.length === 0 ? (
              <Empty description={t('business.noData')} />
            ) : (
              bars(t('business.topUsers'), topUsers.map((u) => u.username || `#${u.user_id}`), topUsers)
            )}
          </Card>
        </Col>
        <Col xs={24}>
          <Card title={t('business.perChannel')} size="small">
            <Table<ChannelStats>
              rowKey="channel_id"
              size="small"
              columns={columns}
              dataSource={channels.data?.items ?? []}
              loading={channels.isPending}
              scroll={{ x: 'max-content' }}
              pagination={{ pageSize: 50, hideOnSinglePage: true }}
              locale={{ emptyText: channels.error ? t('common.loadFailed') : t('business.noData') }}
              data-testid="business-channels"
            />
          </Card>
        </Col>
      </Row>
    </>
  );
}
