import { Space, Tag, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { useChannelHealth } from '../../../api/channels';
import type { Channel, HealthState } from '../../../api/types';
import { useFormat } from '../../../lib/useFormat';

const COLORS: Record<HealthState | 'ok' | 'cooling', string> = {
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
  return <HealthStateTag state={state} />;
}

/** Success rate and latency from the channel's live metrics. */
export function ChannelMetrics({ channel }: { channel: Channel }) {
  const fmt = useFormat();
  const { t } = useTranslation();
  const health = channel.health;
  if (!health || (health.success_rate === undefined && health.latency_ms === undefined)) {
    return <Typography.Text type="secondary">{t('common.none')}</Typography.Text>;
  }
  return (
    <Space size={4} wrap>
      {health.success_rate !== undefined ? <span>{fmt.percent(health.success_rate)}</span> : null}
      {health.latency_ms !== undefined ? <Typography.Text type="secondary">{fmt.duration(health.latency_ms)}</Typography.Text> : null}
    </Space>
  );
}
