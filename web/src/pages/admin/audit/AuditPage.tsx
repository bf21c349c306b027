import { Input, InputNumber, Space, Table, Tag, Typography, type TableProps } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useAuditLog, type AuditQuery } from '../../../api/audit';
import type { AuditEntry } from '../../../api/types';
import { PageHeader } from '../../../components/PageHeader';
import { QueryError } from '../../../components/QueryError';
import { formatTime } from '../../../lib/format';

export default function AuditPage() {
  const { t } = useTranslation();
  const [query, setQuery] = useState<AuditQuery>({ page: 1, size: 20 });
  const audit = useAuditLog(query);
  const setFilter = (patch: Partial<AuditQuery>) => setQuery((q) => ({ ...q, ...patch, page: 1 }));

  const columns: TableProps<AuditEntry>['columns'] = [
    { title: t('audit.time'), dataIndex: 'created_at', key: 'time', render: (v: string) => formatTime(v) },
    { title: t('audit.actor'), key: 'actor', render: (_, e) => e.actor_name || e.actor_id },
    { title: t('audit.action'), dataIndex: 'action', key: 'action', render: (v: string) => (
        <Tag title={v}>{t(`audit.actions.${v.replace(/\./g, '_')}`, { defaultValue: v })}</Tag>
      ),
    },
    { title: t('audit.target'), dataIndex: 'target', key: 'target' },
    {
      title: t('audit.detail'),
      dataIndex: 'detail',
      key: 'detail',
      render: (v: unknown) => {
        const text = typeof v === 'string' ? v : JSON.stringify(v);
        if (!text || text === 'null' || text === '{}') return t('common.none');
        return (
          <Typography.Text ellipsis={{ tooltip: true }} style={{ maxWidth: 360 }}>
            {text}
          </Typography.Text>
        );
      },
    },
    { title: t('audit.ip'), dataIndex: 'ip', key: 'ip', responsive: ['md'] },
  ];

  return (
    <>
      <PageHeader title={t('audit.title')} />
      <Space wrap style={{ marginBottom: 16 }}>
        <InputNumber min={1} placeholder={t('audit.actorId')} aria-label={t('audit.actorId')} onChange={(v) => setFilter({ actor_id: v ?? undefined })} style={{ width: 140 }} />
        <Input.Search allowClear placeholder={t('audit.action')} aria-label={t('audit.action')} onSearch={(action) => setFilter({ action: action.trim() })} style={{ width: 200 }} />
      </Space>
      {audit.error ? <QueryError error={audit.error} onRetry={() => void audit.refetch()} /> : null}
      <Table<AuditEntry>
        rowKey="id"
        columns={columns}
        dataSource={audit.data?.items ?? []}
        loading={audit.isPending}
        scroll={{ x: 'max-content' }}
        locale={{ emptyText: audit.error ? t('common.loadFailed') : t('audit.empty') }}
        pagination={{
          current: query.page,
          pageSize: query.size,
          total: audit.data?.total ?? 0,
          showSizeChanger: true,
          onChange: (page, size) => setQuery((q) => ({ ...q, page, size })),
        }}
      />
    </>
  );
}
