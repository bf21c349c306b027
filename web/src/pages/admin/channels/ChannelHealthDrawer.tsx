import { Descriptions, Drawer, Space, Table, Tag, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { useChannelHealth } from '../../../api/channels';
import type { Channel, HealthMetrics } from '../../../api/types';
import { WIDE_DRAWER } from '../../../components/drawerSize';
import { QueryError } from '../../../components/QueryError';
import { formatTime } from '../../../lib/format';
import { useFormat } from '../../../lib/useFormat';
import { HealthStateTag } from './HealthTag';

const WINDOWS = ['1m', '1h', '24h'];

/** The breaker state of a channel and each of its keys, with its live metrics. */
export function ChannelHealthDrawer({ channel, onClose }: { channel: Channel | null; onClose: () => void }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const health = useChannelHealth(channel?.id ?? 0, !!channel);
  const data = health.data;
  const m: HealthMetrics = data?.metrics ?? {};
  const triple = (a?: number, b?: number, c?: number) => [a, b, c].map((v) => fmt.duration(v)).join(' / ');

  return (
    <Drawer open={!!channel} onClose={onClose} title={t('channels.healthTitle', { name: channel?.name ?? '' })} size={WIDE_DRAWER} destroyOnHidden>
      {health.error ? <QueryError error={health.error} onRetry={() => void health.refetch()} /> : null}
      <Descriptions column={1} size="small" bordered>
        <Descriptions.Item label={t('channels.health')}>
          <HealthStateTag state={data?.state} />
        </Descriptions.Item>
        {data?.trips !== undefined ? <Descriptions.Item label={t('channels.trips')}>{fmt.number(data.trips)}</Descriptions.Item> : null}
        {data?.cooldown_until ? (
          <Descriptions.Item label={t('channels.cooldownUntil')}>{formatTime(data.cooldown_until)}</Descriptions.Item>
        ) : null}
        <Descriptions.Item label={t('channels.successRate')}>{fmt.percent(m.success_rate)}</Descriptions.Item>
        <Descriptions.Item label={t('channels.latencyEwma')}>
          {`${fmt.duration(m.latency_ewma_ms)} · ${t('logs.firstByte')} ${fmt.duration(m.first_byte_ewma_ms)}`}
        </Descriptions.Item>
        <Descriptions.Item label={t('channels.latencyPercentiles')}>{triple(m.latency_p50_ms, m.latency_p95_ms, m.latency_p99_ms)}</Descriptions.Item>
        <Descriptions.Item label={t('channels.firstBytePercentiles')}>
          {triple(m.first_byte_p50_ms, m.first_byte_p95_ms, m.first_byte_p99_ms)}
        </Descriptions.Item>
        <Descriptions.Item label={t('channels.activeRequests')}>{fmt.number(m.active)}</Descriptions.Item>
        <Descriptions.Item label={t('channels.requestsByWindow')}>
          <Space orientation="vertical" size={2}>
            {WINDOWS.filter((w) => m.counts?.[w]).map((w) => (
              <span key={w}>
                {t(`channels.window_${w}`)}
                {': '}
                {fmt.number(m.counts?.[w]?.total)}
                {Object.entries(m.counts?.[w]?.by_class ?? {}).map(([cls, n]) => (
                  <Tag key={cls} style={{ marginInlineStart: 6 }}>{`${cls} ${n}`}</Tag>
                ))}
              </span>
            ))}
          </Space>
        </Descriptions.Item>
        {data?.unsupported_models?.length ? (
          <Descriptions.Item label={t('channels.unsupportedModels')}>
            {data.unsupported_models.map((model) => (
              <Tag key={model}>{model}</Tag>
            ))}
          </Descriptions.Item>
        ) : null}
      </Descriptions>
      <Typography.Title level={5} style={{ marginTop: 24 }}>
        {t('channels.keys')}
      </Typography.Title>
      <Table
        size="small"
        rowKey="index"
        loading={health.isPending}
        pagination={false}
        scroll={{ x: 'max-content' }}
        dataSource={data?.keys ?? []}
        columns={[
          { title: t('channels.keyIndex'), dataIndex: 'index' },
          {
            title: t('channels.key'),
            key: 'masked',
            render: (_, k) => <span className="tg-mono">{k.masked ?? channel?.keys?.[k.index] ?? t('common.none')}</span>,
          },
          { title: t('channels.health'), dataIndex: 'state', render: (v: string) => <HealthStateTag state={v} /> },
          { title: t('channels.successRate'), key: 'rate', render: (_, k) => fmt.percent(k.metrics?.success_rate) },
          { title: t('channels.latencyEwma'), key: 'latency', render: (_, k) => fmt.duration(k.metrics?.latency_ewma_ms) },
          {
            title: t('channels.cooldownUntil'),
            dataIndex: 'cooldown_until',
            render: (v: string | null | undefined) => (v ? formatTime(v) : t('common.none')),
          },
        ]}
      />
    </Drawer>
  );
}
