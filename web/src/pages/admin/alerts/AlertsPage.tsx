import { ReloadOutlined } from '@ant-design/icons';
import { Button, Flex, Select, Table, Tag, Typography, type TableProps } from 'antd';
import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { useAlertLogs, type AlertFilter } from '../../../api/alerts';
import type { AlertLog } from '../../../api/types';
import { PageHeader } from '../../../components/PageHeader';
import { QueryError } from '../../../components/QueryError';
import { formatTime } from '../../../lib/format';
import { ALERT_EVENTS } from '../settings/alertsForm';

const STATUS_COLORS: Record<string, string> = { sent: 'success', failed: 'error', skipped: 'default' };

/** Event names as i18n keys ("channel.opened" → alertEvents.channel_opened), unknown ones as they are. */
export function eventKey(event: string): string {
  return `alertEvents.${event.replace(/\./g, '_')}`;
}

/** Every alert the gateway sent (or failed to send), newest first, with "load more". */
export default function AlertsPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [filter, setFilter] = useState<AlertFilter>({});
  const logs = useAlertLogs(filter);
  const rows = useMemo(() => logs.data?.pages.flatMap((p) => p.items ?? []) ?? [], [logs.data]);
  const set = (patch: Partial<AlertFilter>) => setFilter((f) => ({ ...f, ...patch }));

  const columns: TableProps<AlertLog>['columns'] = [
    { title: t('alerts.time'), dataIndex: 'created_at', key: 'time', render: (v: string) => formatTime(v) },
    {
      title: t('alerts.event'),
      dataIndex: 'event',
      key: 'event',
      render: (v: string) => <Tag>{t(eventKey(v), { defaultValue: v })}</Tag>,
    },
    { title: t('alerts.channel'), dataIndex: 'channel', key: 'channel', render: (v: string) => t(`alerts.channel_${v}`, { defaultValue: v }) },
    {
      title: t('alerts.target'),
      dataIndex: 'target',
      key: 'target',
      render: (v: string) => (
        <Typography.Text ellipsis={{ tooltip: true }} style={{ maxWidth: 280 }}>
          {v || t('common.none')}
        </Typography.Text>
      ),
    },
    {
      title: t('alerts.subject'),
      dataIndex: 'subject',
      key: 'subject',
      responsive: ['md'],
      render: (v: string) => (
        <Typography.Text ellipsis={{ tooltip: true }} style={{ maxWidth: 320 }}>
          {v || t('common.none')}
        </Typography.Text>
      ),
    },
    {
      title: t('common.status'),
      dataIndex: 'status',
      key: 'status',
      render: (v: string, r) => (
        <Flex gap={4} align="center" wrap>
          <Tag color={STATUS_COLORS[v] ?? 'default'} data-testid="alert-status">
            {t(`alerts.status_${v}`, { defaultValue: v })}
          </Tag>
          {r.error ? (
            <Typography.Text type="danger" ellipsis={{ tooltip: true }} style={{ maxWidth: 240 }}>
              {r.error}
            </Typography.Text>
          ) : null}
        </Flex>
      ),
    },
    { title: t('alerts.attempts'), dataIndex: 'attempts', key: 'attempts', responsive: ['lg'] },
  ];

  return (
    <>
      <PageHeader
        title={t('alerts.title')}
        extra={
          <>
            <Button onClick={() => navigate('/console/admin/settings')}>{t('alerts.configure')}</Button>
            <Button icon={<ReloadOutlined />} onClick={() => void logs.refetch()} loading={logs.isRefetching}>
              {t('common.refresh')}
            </Button>
          </>
        }
      />
      <Flex wrap gap={8} style={{ marginBottom: 16 }}>
        <Select
          allowClear
          placeholder={t('alerts.event')}
          aria-label={t('alerts.event')}
          style={{ width: 220 }}
          onChange={(event?: string) => set({ event })}
          options={[...ALERT_EVENTS, 'test'].map((e) => ({ value: e, label: t(eventKey(e)) }))}
        />
        <Select
          allowClear
          placeholder={t('alerts.channel')}
          aria-label={t('alerts.channel')}
          style={{ width: 150 }}
          onChange={(channel?: string) => set({ channel })}
          options={['webhook', 'email'].map((c) => ({ value: c, label: t(`alerts.channel_${c}`) }))}
        />
        <Select
          allowClear
          placeholder={t('common.status')}
          aria-label={t('common.status')}
          style={{ width: 150 }}
          onChange={(status?: string) => set({ status })}
          options={['sent', 'failed', 'skipped'].map((s) => ({ value: s, label: t(`alerts.status_${s}`) }))}
        />
      </Flex>
      {logs.error ? <QueryError error={logs.error} onRetry={() => void logs.refetch()} /> : null}
      <Table<AlertLog>
        rowKey="id"
        columns={columns}
        dataSource={rows}
        loading={logs.isPending}
        scroll={{ x: 'max-content' }}
        pagination={false}
        locale={{ emptyText: logs.error ? t('common.loadFailed') : t('alerts.empty') }}
        data-testid="alerts-table"
      />
      {logs.hasNextPage ? (
        <Flex justify="center" style={{ marginTop: 16 }}>
          <Button onClick={() => void logs.fetchNextPage()} loading={logs.isFetchingNextPage}>
            {t('alerts.loadMore')}
          </Button>
        </Flex>
      ) : null}
    </>
  );
}
