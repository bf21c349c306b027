import { DeleteOutlined, DownloadOutlined, PlusOutlined } from '@ant-design/icons';
import { App, Button, Popconfirm, Select, Space, Switch, Tag, Tooltip, Typography, type TableProps } from 'antd';
import { ResponsiveTable } from '../../../components/ResponsiveTable';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useDeleteRedemption, useRedemptionBatches, useRedemptions, useSetRedemptionStatus } from '../../../api/adminMoney';
import type { CreatedBatch, Redemption, RedemptionStatus } from '../../../api/types';
import { PageHeader } from '../../../components/PageHeader';
import { QueryError } from '../../../components/QueryError';
import { downloadFile } from '../../../lib/download';
import { formatTime } from '../../../lib/format';
import { useFormat } from '../../../lib/useFormat';
import { BatchCodesModal } from './BatchCodesModal';
import { CreateBatchModal } from './CreateBatchModal';
import { usePaging } from '../../../lib/usePaging';

const STATUSES: RedemptionStatus[] = ['unused', 'used', 'expired', 'disabled'];
const COLORS: Record<RedemptionStatus, string> = { unused: 'success', used: 'default', expired: 'warning', disabled: 'error' };

export default function RedemptionsPage() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { message } = App.useApp();
  const { page, size, setPage, pagination } = usePaging(20);
  const [batch, setBatch] = useState<string | undefined>();
  const batches = useRedemptionBatches();
  const [status, setStatus] = useState<RedemptionStatus | undefined>();
  const codes = useRedemptions({ page, size, batch, status });
  const setCodeStatus = useSetRedemptionStatus();
  const remove = useDeleteRedemption();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedBatch | null>(null);

  const onExport = (id: string) =>
    void downloadFile('/api/admin/redemptions/export', { batch: id }, `redemptions-${id}.csv`).catch((err: Error) =>
      message.error(err.message),
    );

  const columns: TableProps<Redemption>['columns'] = [
    { title: t('redemptions.batch'), dataIndex: 'batch_name', key: 'batch', ellipsis: true, render: (v: string | undefined, r) => v || r.batch },
    {
      title: t('redemptions.code'),
      dataIndex: 'hint',
      key: 'hint',
      render: (v?: string) => <Typography.Text className="tg-mono">{v ?? t('common.none')}</Typography.Text>,
    },
    { title: t('redemptions.value'), dataIndex: 'quota', key: 'quota', render: (v: number) => fmt.money(v) },
    {
      title: t('common.status'),
      dataIndex: 'status',
      key: 'status',
      render: (v: RedemptionStatus) => (
        <Tag color={COLORS[v] ?? 'default'} data-testid="code-status">
          {t(`redemptions.status_${v}`, { defaultValue: v })}
        </Tag>
      ),
    },
    {
      title: t('redemptions.usedBy'),
      key: 'used_by',
      responsive: ['md'],
      render: (_, r) => (r.used_by ? `${r.used_by_name ?? ''} #${r.used_by}`.trim() : t('common.none')),
    },
    {
      title: t('redemptions.usedIp'),
      dataIndex: 'used_ip',
      key: 'used_ip',
      responsive: ['xl'],
      render: (v?: string) => v || t('common.none'),
    },
    { title: t('redemptions.usedAt'), dataIndex: 'used_at', key: 'used_at', responsive: ['lg'], render: (v?: string | null) => formatTime(v) || t('common.none') },
    { title: t('redemptions.expiresAt'), dataIndex: 'expires_at', key: 'expires_at', responsive: ['lg'], render: (v?: string | null) => (v ? formatTime(v) : t('keys.never')) },
    {
      title: t('common.actions'),
      key: 'actions',
      fixed: 'right',
      render: (_, r) => (
        <Space size={4}>
          {r.status === 'unused' || r.status === 'disabled' ? (
            <Switch
              size="small"
              checked={r.status === 'unused'}
              aria-label={r.status === 'unused' ? t('redemptions.disable') : t('redemptions.enable')}
              loading={setCodeStatus.isPending && setCodeStatus.variables?.id === r.id}
              onChange={(on) =>
                setCodeStatus.mutate({ id: r.id, status: on ? 'unused' : 'disabled' }, { onError: (err) => message.error(err.message) })
              }
            />
          ) : null}
          {r.status !== 'used' ? (
            <Popconfirm
              title={t('redemptions.deleteConfirm')}
              okText={t('common.delete')}
              cancelText={t('common.cancel')}
              okButtonProps={{ danger: true }}
              onConfirm={() =>
                remove.mutate(r.id, { onSuccess: () => message.success(t('common.deleted')), onError: (err) => message.error(err.message) })
              }
            >
              <Button type="text" danger aria-label={t('common.delete')} icon={<DeleteOutlined />} />
            </Popconfirm>
          ) : null}
        </Space>
      ),
    },
  ];

  return (
    <>
      <PageHeader
        title={t('redemptions.title')}
        extra={
          <>
            <Select
              allowClear
              showSearch={{ optionFilterProp: 'label' }}
              aria-label={t('redemptions.batch')}
              placeholder={t('redemptions.batch')}
              value={batch}
              loading={batches.isPending}
              onChange={(v) => {
                setBatch(v);
                setPage(1);
              }}
              options={(batches.data?.items ?? []).map((b) => ({
                value: b.batch,
                label: t('redemptions.batchOption', { name: b.name, unused: b.unused, count: b.count }),
              }))}
              style={{ width: 240 }}
              data-testid="filter-batch"
            />
            <Select
              allowClear
              aria-label={t('common.status')}
              placeholder={t('common.status')}
              value={status}
              onChange={(v) => {
                setStatus(v);
                setPage(1);
              }}
              options={STATUSES.map((s) => ({ value: s, label: t(`redemptions.status_${s}`) }))}
              style={{ width: 140 }}
            />
            <Tooltip title={batch ? undefined : t('redemptions.exportNeedsBatch')}>
              <Button icon={<DownloadOutlined />} disabled={!batch} onClick={() => batch && onExport(batch)} data-testid="export-batch">
                {t('redemptions.exportCsv')}
              </Button>
            </Tooltip>
            <Button type="primary" icon={<PlusOutlined />} onClick={() => setCreating(true)} data-testid="create-batch">
              {t('redemptions.create')}
            </Button>
          </>
        }
      />
      {codes.error ? <QueryError error={codes.error} onRetry={() => void codes.refetch()} /> : null}
      <ResponsiveTable<Redemption>
        cardTitle={t('redemptions.title')}
        rowKey="id"
        columns={columns}
        dataSource={codes.data?.items ?? []}
        loading={codes.isFetching}
        locale={{ emptyText: t('redemptions.empty') }}
        pagination={pagination(codes.data?.total)}
      />
      <CreateBatchModal
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(b) => {
          setCreating(false);
          setCreated(b);
          setBatch(b.batch);
          setPage(1);
        }}
      />
      <BatchCodesModal created={created} onClose={() => setCreated(null)} onExport={onExport} />
    </>
  );
}
