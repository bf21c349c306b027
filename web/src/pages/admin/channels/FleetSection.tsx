import { Table, Tag, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import type { Channel, FleetStats, FleetWindow } from '../../../api/types';
import { useFormat } from '../../../lib/useFormat';
import { FLEET_WINDOWS, hasTraffic } from './fleet';

interface Row {
  window: FleetWindow;
  stats?: FleetStats;
}

/** Every node's traffic on the channel over the last 5 minutes, hour and day; "no traffic" instead of a rate without attempts. */
export function FleetSection({ fleet }: { fleet?: Partial<Record<FleetWindow, FleetStats>> }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  if (!fleet) return <Typography.Text type="secondary">{t('fleet.unavailable')}</Typography.Text>;
  const rows: Row[] = FLEET_WINDOWS.map((w) => ({ window: w, stats: fleet[w] }));
  const traffic = (r: Row, render: (s: FleetStats) => React.ReactNode) =>
    hasTraffic(r.stats) ? render(r.stats) : <Typography.Text type="secondary">{t('fleet.noTraffic')}</Typography.Text>;
  return (
    <Table<Row>
      size="small"
      rowKey="window"
      pagination={false}
      scroll={{ x: 'max-content' }}
      dataSource={rows}
      onRow={(r) => ({ 'data-testid': `fleet-${r.window}` }) as React.HTMLAttributes<HTMLElement>}
      columns={[
        { title: t('fleet.window'), key: 'window', render: (_, r) => t(`fleet.window_${r.window}`) },
        { title: t('fleet.requests'), key: 'requests', render: (_, r) => fmt.number(r.stats?.requests ?? 0) },
        { title: t('fleet.attempts'), key: 'attempts', render: (_, r) => fmt.number(r.stats?.attempts ?? 0) },
        {
          title: t('fleet.successRate'),
          key: 'rate',
          render: (_, r) => traffic(r, (s) => <span data-testid={`fleet-rate-${r.window}`}>{fmt.percent(s.success_rate)}</span>),
        },
        {
          title: t('fleet.latency'),
          key: 'latency',
          render: (_, r) => traffic(r, (s) => `${fmt.duration(Math.round(s.latency_p50_ms))} / ${fmt.duration(Math.round(s.latency_p95_ms))}`),
        },
        {
          title: t('fleet.firstByte'),
          key: 'first_byte',
          render: (_, r) =>
            traffic(r, (s) => `${fmt.duration(Math.round(s.first_byte_p50_ms))} / ${fmt.duration(Math.round(s.first_byte_p95_ms))}`),
        },
        {
          title: t('fleet.tokens'),
          key: 'tokens',
          render: (_, r) => `${fmt.number(r.stats?.prompt_tokens ?? 0)} / ${fmt.number(r.stats?.completion_tokens ?? 0)}`,
        },
        {
          title: t('fleet.classes'),
          key: 'classes',
          render: (_, r) =>
            Object.entries(r.stats?.classes ?? {}).map(([cls, n]) => (
              <Tag key={cls}>{`${cls} ${fmt.number(n)}`}</Tag>
            )),
        },
      ]}
    />
  );
}

/** The channel list's fleet cell: requests and success rate over the last hour, every node merged. */
export function FleetHourCell({ channel }: { channel: Channel }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const s = channel.health?.fleet_1h;
  if (!hasTraffic(s)) {
    return (
      <Typography.Text type="secondary" data-testid={`fleet-1h-${channel.id}`}>
        {t('fleet.noTraffic')}
      </Typography.Text>
    );
  }
  return (
    <span data-testid={`fleet-1h-${channel.id}`}>
      {t('fleet.requestsAt', { requests: fmt.number(s.requests), rate: fmt.percent(s.success_rate) })}
    </span>
  );
}
