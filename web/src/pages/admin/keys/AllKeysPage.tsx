import { App, Input, InputNumber, Space, Tag, Typography, type TableProps } from 'antd';
import { ResponsiveTable } from '../../../components/ResponsiveTable';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useAdminTokens, useSetAdminTokenStatus, type AdminTokenQuery } from '../../../api/tokens';
import type { Token } from '../../../api/types';
import { KeyBudget } from '../../../components/KeyBudget';
import { KeyGroup, KeyStatus } from '../../../components/KeyMarks';
import { PageHeader } from '../../../components/PageHeader';
import { QueryError } from '../../../components/QueryError';
import { formatTime } from '../../../lib/format';
import { useFormat } from '../../../lib/useFormat';

/** Every user's sk- keys, with the admin's one lever: enable or disable. */
export default function AllKeysPage() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { message } = App.useApp();
  const [query, setQuery] = useState<AdminTokenQuery>({ page: 1, size: 20 });
  const tokens = useAdminTokens(query);
  const setStatus = useSetAdminTokenStatus();
  const setFilter = (patch: Partial<AdminTokenQuery>) => setQuery((q) => ({ ...q, ...patch, page: 1 }));

  const columns: TableProps<Token>['columns'] = [
    { title: t('keys.id'), dataIndex: 'id', key: 'id', width: 64 },
    { title: t('logs.userId'), dataIndex: 'user_id', key: 'user' },
    { title: t('keys.name'), dataIndex: 'name', key: 'name', ellipsis: true },
    {
      title: t('keys.key'),
      dataIndex: 'key',
      key: 'key',
      render: (key: string) => <Typography.Text className="tg-mono">{key}</Typography.Text>,
    },
    {
      title: t('common.status'),
      key: 'status',
      render: (_, token) => (
        <KeyStatus
          token={token}
          lockedForOwner={false}
          onChange={(on) =>
            setStatus.mutate(
              { id: token.id, status: on ? 'enabled' : 'disabled' },
              { onError: (err) => message.error(err.message) },
            )
          }
        />
      ),
    },
    {
      title: t('keys.remainQuota'),
      key: 'remain',
      render: (_, token) => (token.unlimited ? <Tag>{t('keys.unlimitedTag')}</Tag> : fmt.money(token.remain_quota)),
    },
    { title: t('keys.usedQuota'), dataIndex: 'used_quota', key: 'used', render: (v: number) => fmt.money(v) },
    { title: t('keys.spend'), key: 'spend', responsive: ['md'], render: (_, token) => <KeyBudget token={token} /> },
    { title: t('keys.group'), key: 'group', responsive: ['md'], render: (_, token) => <KeyGroup token={token} /> },
    {
      title: t('keys.lastUsed'),
      dataIndex: 'last_used_at',
      key: 'last_used',
      responsive: ['lg'],
      render: (v: string | null) => (v ? formatTime(v) : t('common.none')),
    },
  ];

  return (
    <>
      <PageHeader title={t('keys.allTitle')} />
      <Space wrap style={{ marginBottom: 16 }}>
        <Input.Search allowClear placeholder={t('keys.search')} aria-label={t('keys.search')} onSearch={(q) => setFilter({ q: q.trim() })} style={{ width: 220 }} />
        <InputNumber
          min={1}
          placeholder={t('logs.userId')}
          aria-label={t('logs.userId')}
          onChange={(v) => setFilter({ user_id: v ?? undefined })}
          style={{ width: 140 }}
        />
      </Space>
      {tokens.error ? <QueryError error={tokens.error} onRetry={() => void tokens.refetch()} /> : null}
      <ResponsiveTable<Token>
        cardTitle={t('keys.allTitle')}
        rowKey="id"
        columns={columns}
        dataSource={tokens.data?.items ?? []}
        loading={tokens.isPending}
        locale={{ emptyText: tokens.error ? t('common.loadFailed') : t('keys.emptyAll') }}
        pagination={{
          current: query.page,
          pageSize: query.size,
          total: tokens.data?.total ?? 0,
          showSizeChanger: true,
          onChange: (page, size) => setQuery((q) => ({ ...q, page, size })),
        }}
      />
    </>
  );
}
