import { Modal, Progress, Table, Tag } from 'antd';
import { useTranslation } from 'react-i18next';
import { useChannelTestJob } from '../../../api/channels';
import type { Channel, ChannelTestResult } from '../../../api/types';
import { QueryError } from '../../../components/QueryError';
import { useFormat } from '../../../lib/useFormat';

/** Live progress of a "test many channels" job. */
export function ChannelTestModal({ jobId, channels, onClose }: { jobId: string | null; channels: Channel[]; onClose: () => void }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const job = useChannelTestJob(jobId);
  const data = job.data;
  const percent = data && data.total > 0 ? Math.round((data.done / data.total) * 100) : 0;
  const names = new Map(channels.map((c) => [c.id, c.name]));
  const done = !!data && data.done >= data.total;

  return (
    <Modal
      open={!!jobId}
      title={t('channels.testAllTitle')}
      onCancel={onClose}
      onOk={onClose}
      okText={t('common.close')}
      cancelButtonProps={{ style: { display: 'none' } }}
      width={720}
      destroyOnHidden
    >
      {job.error ? <QueryError error={job.error} onRetry={() => void job.refetch()} /> : null}
      <Progress percent={percent} status={done ? 'success' : 'active'} data-testid="test-progress" />
      <p>{t('channels.testProgress', { done: data?.done ?? 0, total: data?.total ?? 0 })}</p>
      <Table<ChannelTestResult & { n: number }>
        size="small"
        rowKey="n"
        pagination={false}
        scroll={{ y: 320 }}
        dataSource={(data?.results ?? []).map((r, n) => ({ ...r, n }))}
        columns={[
          { title: t('channels.name'), key: 'name', render: (_, r) => {
              const id = r.channel_id ?? r.id;
              return id === undefined ? '' : names.get(id) ?? `#${id}`;
            },
          },
          {
            title: t('channels.result'),
            key: 'ok',
            render: (_, r) => <Tag color={r.ok ? 'success' : 'error'}>{r.ok ? t('channels.testOk') : r.error_class || t('channels.testFailed')}</Tag>,
          },
          { title: t('logs.latency'), dataIndex: 'latency_ms', render: (v: number) => fmt.duration(v) },
          { title: t('logs.error'), dataIndex: 'error', ellipsis: true },
        ]}
      />
    </Modal>
  );
}
