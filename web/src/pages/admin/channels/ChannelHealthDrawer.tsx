import { App, Button, Descriptions, Drawer, Popconfirm, Space, Table, Tag, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { useBreakerAction, useChannelHealth } from '../../../api/channels';
import type { BreakerAction, Channel, HealthMetrics } from '../../../api/types';
import { WIDE_DRAWER } from '../../../components/drawerSize';
import { QueryError } from '../../../components/QueryError';
import { formatTime } from '../../../lib/format';
import { useFormat } from '../../../lib/useFormat';
import { FleetSection } from './FleetSection';
import { HealthStateTag } from './HealthTag';

const WINDOWS = ['1m', '1h', '24h'];
const ACTIONS: BreakerAction[] = ['open', 'close', 'half_open', 'reset'];

/** Force open (asks first) / close / half-open / reset buttons for the channel breaker or one key's. */
function BreakerButtons({ channelId, keyIndex, small }: { channelId: number; keyIndex?: number; small?: boolean }) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const breaker = useBreakerAction();
  const run = (action: BreakerAction) =>
    breaker.mutate(
      { id: channelId, action, keyIndex },
      {
        onSuccess: () => message.success(t(`channels.breakerDone_${action}`)),
        onError: (err) => message.error(err.message),
      },
    );
  const suffix = keyIndex === undefined ? 'channel' : `key-${keyIndex}`;
  const busy = (action: BreakerAction) => breaker.isPending && breaker.variables?.action === action;
  return (
    <Space size={4} wrap>
      {ACTIONS.map((action) => {
        const label = t(`channels.breaker_${action}`);
        const testId = `breaker-${action}-${suffix}`;
        return action === 'open' ? (
          <Popconfirm
            key={action}
            title={keyIndex === undefined ? t('channels.forceOpenConfirm') : t('channels.forceOpenKeyConfirm', { index: keyIndex })}
            description={t('channels.forceOpenHint')}
            okText={label}
            cancelText={t('common.cancel')}
            okButtonProps={{ danger: true }}
            onConfirm={() => run(action)}
          >
            <Button size={small ? 'small' : 'middle'} danger loading={busy(action)} data-testid={testId}>
              {label}
            </Button>
          </Popconfirm>
        ) : (
          <Button key={action} size={small ? 'small' : 'middle'} loading={busy(action)} onClick={() => run(action)} data-testid={testId}>
            {label}
          </Button>
        );
      })}
    </Space>
  );
}

/** The state tag plus a "forced" mark when an admin pinned it. */
function StateWithForced({ state, forced }: { state: string | undefined; forced?: boolean }) {
  const { t } = useTranslation();
  return (
    <Space size={4}>
      <HealthStateTag state={state} />
      {forced ? (
        <Tag color="purple" data-testid="health-forced">
          {t('channels.forced')}
        </Tag>
      ) : null}
    </Space>
  );
}

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
          <StateWithForced state={data?.state} forced={data?.forced} />
        </Descriptions.Item>
        {channel ? (
          <Descriptions.Item label={t('channels.breakerControl')}>
            <BreakerButtons channelId={channel.id} />
          </Descriptions.Item>
        ) : null}
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
        {t('fleet.title')}
      </Typography.Title>
      <Typography.Paragraph type="secondary">{t('fleet.hint')}</Typography.Paragraph>
      {data ? <FleetSection fleet={data.fleet} /> : null}
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
          { title: t('channels.health'), dataIndex: 'state', render: (v: string, k) => <StateWithForced state={v} forced={k.forced} /> },
          { title: t('channels.successRate'), key: 'rate', render: (_, k) => fmt.percent(k.metrics?.success_rate) },
          { title: t('channels.latencyEwma'), key: 'latency', render: (_, k) => fmt.duration(k.metrics?.latency_ewma_ms) },
          {
            title: t('channels.cooldownUntil'),
            dataIndex: 'cooldown_until',
            render: (v: string | null | undefined) => (v ? formatTime(v) : t('common.none')),
          },
          {
            title: t('channels.breakerControl'),
            key: 'breaker',
            render: (_, k) => (channel ? <BreakerButtons channelId={channel.id} keyIndex={k.index} small /> : null),
          },
        ]}
      />
    </Drawer>
  );
}
