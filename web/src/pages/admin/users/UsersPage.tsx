import { DeleteOutlined, DollarOutlined, EditOutlined, UserAddOutlined } from '@ant-design/icons';
import { App, Button, Input, Popconfirm, Select, Space, Tag, Tooltip, type TableProps } from 'antd';
import { ResponsiveTable } from '../../../components/ResponsiveTable';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useDeleteUser, useUsers, type UserQuery } from '../../../api/users';
import { useSession } from '../../../auth/SessionProvider';
import type { User } from '../../../api/types';
import { PageHeader } from '../../../components/PageHeader';
import { QueryError } from '../../../components/QueryError';
import { formatTime } from '../../../lib/format';
import { useFormat } from '../../../lib/useFormat';
import { CreateUserModal } from './CreateUserModal';
import { QuotaModal } from './QuotaModal';
import { UserEditDrawer } from './UserEditDrawer';

const ROLE_COLORS = { user: 'default', admin: 'blue', root: 'gold' } as const;

export default function UsersPage() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const [query, setQuery] = useState<UserQuery>({ page: 1, size: 20 });
  const users = useUsers(query);
  const [editing, setEditing] = useState<User | null>(null);
  const [funding, setFunding] = useState<User | null>(null);
  const [creating, setCreating] = useState(false);
  const { user: me } = useSession();
  const { message } = App.useApp();
  const remove = useDeleteUser();
  const deleteUser = async (u: User) => {
    try {
      await remove.mutateAsync(u.id);
      message.success(t('users.deleted', { name: u.username }));
    } catch (err) {
      message.error(err instanceof Error ? err.message : t('errors.unknown'));
    }
  };
  const setFilter = (patch: Partial<UserQuery>) => setQuery((q) => ({ ...q, ...patch, page: 1 }));

  const columns: TableProps<User>['columns'] = [
    { title: t('users.id'), dataIndex: 'id', key: 'id', width: 64 },
    { title: t('auth.username'), dataIndex: 'username', key: 'username' },
    { title: t('auth.email'), dataIndex: 'email', key: 'email', responsive: ['lg'] },
    { title: t('users.role'), dataIndex: 'role', key: 'role', render: (r: User['role']) => <Tag color={ROLE_COLORS[r]}>{t(`users.role_${r}`)}</Tag> },
    { title: t('users.group'), dataIndex: 'group', key: 'group', responsive: ['md'] },
    {
      title: t('users.tier'),
      dataIndex: 'tier',
      key: 'tier',
      responsive: ['md'],
      render: (v?: string) => <span data-testid="user-tier-cell">{v || t('common.none')}</span>,
    },
    {
      title: t('common.status'),
      dataIndex: 'status',
      key: 'status',
      render: (s: string) => <Tag color={s === 'enabled' ? 'success' : 'default'}>{t(`common.${s}`)}</Tag>,
    },
    { title: t('dashboard.balance'), dataIndex: 'quota', key: 'quota', render: (v: number) => fmt.money(v) },
    { title: t('users.used'), dataIndex: 'used_quota', key: 'used', responsive: ['md'], render: (v: number) => fmt.money(v) },
    {
      title: t('users.limits'),
      key: 'limits',
      responsive: ['xl'],
      render: (_, u) =>
        u.rpm || u.tpm
          ? t('users.limitsValue', { rpm: u.rpm ? fmt.number(u.rpm) : '∞', tpm: u.tpm ? fmt.number(u.tpm) : '∞' })
          : t('common.none'),
    },
    { title: t('users.requests'), dataIndex: 'request_count', key: 'requests', responsive: ['lg'], render: (v: number) => fmt.number(v) },
    { title: t('users.createdAt'), dataIndex: 'created_at', key: 'created', responsive: ['xl'], render: (v: string) => formatTime(v) },
    {
      title: t('common.actions'),
      key: 'actions',
      fixed: 'right',
      render: (_, u) => (
        <Space size={0}>
          <Tooltip title={t('common.edit')}>
            <Button type="text" aria-label={t('common.edit')} icon={<EditOutlined />} onClick={() => setEditing(u)} />
          </Tooltip>
          <Tooltip title={t('users.adjustQuota')}>
            <Button type="text" aria-label={t('users.adjustQuota')} icon={<DollarOutlined />} onClick={() => setFunding(u)} />
          </Tooltip>
          {u.role !== 'root' && u.id !== me?.id ? (
            <Popconfirm
              title={t('users.deleteConfirm', { name: u.username })}
              description={t('users.deleteHint')}
              okText={t('common.delete')}
              okButtonProps={{ danger: true }}
              cancelText={t('common.cancel')}
              onConfirm={() => deleteUser(u)}
            >
              <Tooltip title={t('common.delete')}>
                <Button type="text" danger aria-label={t('users.deleteUser', { name: u.username })} icon={<DeleteOutlined />} />
              </Tooltip>
            </Popconfirm>
          ) : null}
        </Space>
      ),
    },
  ];

  return (
    <>
      <PageHeader
        title={t('users.title')}
        extra={
          <Button type="primary" icon={<UserAddOutlined />} onClick={() => setCreating(true)}>
            {t('users.create')}
          </Button>
        }
      />
      <Space wrap style={{ marginBottom: 16 }}>
        <Input.Search allowClear placeholder={t('users.search')} aria-label={t('users.search')} onSearch={(q) => setFilter({ q: q.trim() })} style={{ width: 220 }} />
        <Select
          allowClear
          placeholder={t('users.role')}
          aria-label={t('users.role')}
          style={{ width: 140 }}
          onChange={(role) => setFilter({ role })}
          options={(['user', 'admin', 'root'] as const).map((r) => ({ value: r, label: t(`users.role_${r}`) }))}
        />
        <Select
          allowClear
          placeholder={t('common.status')}
          aria-label={t('common.status')}
          style={{ width: 140 }}
          onChange={(status) => setFilter({ status })}
          options={[
            { value: 'enabled', label: t('common.enabled') },
            { value: 'disabled', label: t('common.disabled') },
          ]}
        />
      </Space>
      {users.error ? <QueryError error={users.error} onRetry={() => void users.refetch()} /> : null}
      <ResponsiveTable<User>
        cardTitle={t('users.title')}
        rowKey="id"
        columns={columns}
        dataSource={users.data?.items ?? []}
        loading={users.isPending}
        locale={{ emptyText: users.error ? t('common.loadFailed') : t('users.empty') }}
        pagination={{
          current: query.page,
          pageSize: query.size,
          total: users.data?.total ?? 0,
          showSizeChanger: true,
          onChange: (page, size) => setQuery((q) => ({ ...q, page, size })),
        }}
      />
      <UserEditDrawer user={editing} onClose={() => setEditing(null)} />
      <QuotaModal user={funding} onClose={() => setFunding(null)} />
      <CreateUserModal open={creating} onClose={() => setCreating(false)} />
    </>
  );
}
