import { Descriptions, Drawer, Table, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { useChannelHealth } from '../../../api/channels';
import type { Channel } from '../../../api/types';
import { QueryError } from '../../../components/QueryError';
import { formatTime } from '../../../lib/format';
import { HealthStateTag } from './HealthTag';
import { WIDE_DRAWER } from '../../../components/drawerSize';

/** The breaker state of a channel and each of its keys, with its live metrics. */
export function ChannelHealthDrawer({ channel, onClose }: { channel: Channel | null; onClose: () => void }) {
  const { t } = useTranslation();
  const health = useChannelHealth(channel?.id ?? 0, !!channel);
  const data = health.data;
  return (
    <Drawer open={!!channel} onClose={onClose} title={t('channels.healthTitle', { name: channel?.name ?? '' })} size={WIDE_DRAWER} destroyOnHidden>
      {health.error ? <QueryError error={health.error} onRetry={() => void health.refetch()} /> : null}
      <Descriptions column={1} size="small" bordered>
        <Descriptions.Item label={t('channels.health')}>
          <HealthStateTag state={data?.state} />
        </Descriptions.Item>
        {Object.entries(data?.metrics ?? {}).map(([name, value]) => (
          <Descriptions.Item key={name} label={name}>
            {typeof value === 'object' ? JSON.stringify(value) : String(value)}
          </Descriptions.Item>
        ))}
      </Descriptions>
      <Typography.Title level={5} style={{ marginTop: 24 }}>
        {t('channels.keys')}
      </Typography.Title>
      <Table
        size="small"
        rowKey="index"
        loading={health.isPending}
        pagination={false}
        dataSource={data?.keys ?? []}
        columns={[
          { title: t('channels.keyIndex'), dataIndex: 'index' },
          { title: t('channels.key'), dataIndex: 'masked', render: (v: string) => <span className="tg-mono">{v}</span> },
          { title: t('channels.health'), dataIndex: 'state', render: (v: string) => <HealthStateTag state={v} /> },
          { title: t('channels.cooldownUntil'), dataIndex: 'cooldown_until', render: (v: string | null) => formatTime(v) },
        ]}
      />
    </Drawer>
  );
}
