import { Space, Tag, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { useChannelHealth } from '../../../api/channels';
import type { Channel, HealthState } from '../../../api/types';
import { useFormat } from '../../../lib/useFormat';

const COLORS: Record<HealthState | 'ok' | 'cooling' | 'no_data' | 'failing', string> = {
  no_data: 'default',
  failing: 'error',
  closed: 'success',
  ok: 'success',
  cooling: 'warning',
  half_open: 'warning',
  open: 'error',
  disabled: 'default',
};

/** A circuit-breaker state as a coloured tag. */
export function HealthStateTag({ state }: { state: HealthState | string | undefined }) {
  const { t } = useTranslation();
  if (!state) return <Tag>{t('channels.health_unknown')}</Tag>;
  return (
    <Tag color={COLORS[state as keyof typeof COLORS] ?? 'default'} data-testid="health-state">
      {t(`channels.health_${state}`, { defaultValue: state })}
    </Tag>
  );
}

/** The list's health cell: the channel's embedded health, or the health endpoint when absent. */
export function HealthCell({ channel }: { channel: Channel }) {
  const embedded = channel.health;
  const fetched = useChannelHealth(channel.id, !embedded);
  const state = embedded?.state ?? fetched.data?.state;
  return <HealthStateTag state={honestState(state, embedded)} />;
}

/**
 * A closed breaker only says "nothing tripped": with no call in the last hour (live or test) there is no data,
 * and a channel whose recent calls mostly failed (failed tests included) is failing, not healthy.
 */
export function honestState(state: HealthState | string | undefined, health: Channel['health']): string | undefined {
  if (state !== 'closed' || !health) return state;
  const live = health.requests_1h ?? 0;
  const fleet = health.fleet_1h?.attempts ?? 0;
  const test = health.last_test;
  if (test && !test.ok) return 'failing';
  if (live > 0 && (health.success_rate ?? 1) < 0.5 && !test?.ok) return 'failing';
  // A passed test is data: healthy, and the latency column says the figure is a test's.
  if (live === 0 && fleet === 0) return test ? 'closed' : 'no_data';
  return state;
}

/** Success rate and latency from the channel's live metrics. */
export function ChannelMetrics({ channel }: { channel: Channel }) {
  const fmt = useFormat();
  const { t } = useTranslation();
  const health = channel.health;
  if (health?.last_test && !health.requests_1h) {
    // No live traffic: the latest test's latency, said to be a test's.
    return (
      <Typography.Text type="secondary" data-testid="channel-test-latency">
        {t(health.last_test.ok ? 'channels.testLatency' : 'channels.testFailedShort', { latency: fmt.duration(health.last_test.latency_ms) })}
      </Typography.Text>
    );
  }
  if (!health || (health.success_rate === undefined && health.latency_ms === undefined) || !health.requests_1h) {
    return <Typography.Text type="secondary">{t('channels.health_no_data')}</Typography.Text>;
  }
  return (
    <Space size={4} wrap>
      {health.success_rate !== undefined ? <span>{fmt.percent(health.success_rate)}</span> : null}
      {health.latency_ms !== undefined ? <Typography.Text type="secondary">{fmt.duration(health.latency_ms)}</Typography.Text> : null}
    </Space>
  );
}
