import { DeleteOutlined, EditOutlined, NodeIndexOutlined, PlusOutlined } from '@ant-design/icons';
import { App, Button, Popconfirm, Space, Table, Tag, Tooltip, type TableProps } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useDeleteLogicalGroup, useLogicalGroups } from '../../../api/logicalGroups';
import type { LogicalGroup } from '../../../api/types';
import { PageHeader } from '../../../components/PageHeader';
import { QueryError } from '../../../components/QueryError';
import { LogicalGroupDrawer } from './LogicalGroupDrawer';
import { StickyDrawer } from './StickyDrawer';

/** Logical groups: what keys route through, each with its routes, policies and price ratio. */
export default function GroupsPage() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const groups = useLogicalGroups();
  const remove = useDeleteLogicalGroup();
  const [editing, setEditing] = useState<{ group: LogicalGroup | null } | null>(null);
  const [sticky, setSticky] = useState<string | null>(null);

  const columns: TableProps<LogicalGroup>['columns'] = [
    { title: t('logicalGroups.name'), dataIndex: 'name', key: 'name', render: (v: string) => <span className="tg-mono">{v}</span> },
    { title: t('logicalGroups.displayName'), dataIndex: 'display_name', key: 'display_name', render: (v: string) => v || t('common.none') },
    {
      title: t('common.status'),
      dataIndex: 'status',
      key: 'status',
      render: (v: LogicalGroup['status']) => (
        <Tag color={v === 'disabled' ? 'default' : 'success'}>{v === 'disabled' ? t('common.disabled') : t('common.enabled')}</Tag>
      ),
    },
    { title: t('logicalGroups.ratio'), dataIndex: 'ratio', key: 'ratio', render: (v: string) => `×${v}` },
    {
      title: t('logicalGroups.modelsCount'),
      key: 'models',
      render: (_, g) => (g.models?.length ? t('logicalGroups.modelCount', { count: g.models.length }) : t('logicalGroups.allModels')),
    },
    {
      title: t('logicalGroups.routesCount'),
      key: 'routes',
      render: (_, g) => <span data-testid="group-routes-count">{g.routes?.length ?? 0}</span>,
    },
    {
      title: t('common.actions'),
      key: 'actions',
      render: (_, g) => (
        <Space size={0}>
          <Tooltip title={t('common.edit')}>
            <Button type="text" aria-label={t('common.edit')} icon={<EditOutlined />} onClick={() => setEditing({ group: g })} />
          </Tooltip>
          <Tooltip title={t('logicalGroups.stickyView')}>
            <Button type="text" aria-label={t('logicalGroups.stickyView')} icon={<NodeIndexOutlined />} onClick={() => setSticky(g.name)} />
          </Tooltip>
          <Popconfirm
            title={t('logicalGroups.deleteConfirm', { name: g.name })}
            okText={t('common.delete')}
            cancelText={t('common.cancel')}
            okButtonProps={{ danger: true }}
            onConfirm={() => remove.mutate(g.name, { onError: (err) => message.error(err.message) })}
          >
            <Button type="text" danger aria-label={t('common.delete')} icon={<DeleteOutlined />} disabled={g.name === 'default'} />
          </Popconfirm>
        </Space>
      ),
    },
  ];

  return (
    <>
      <PageHeader
        title={t('logicalGroups.title')}
        extra={
          <Button type="primary" icon={<PlusOutlined />} onClick={() => setEditing({ group: null })} data-testid="create-group">
            {t('logicalGroups.create')}
          </Button>
        }
      />
      {groups.error ? <QueryError error={groups.error} onRetry={() => void groups.refetch()} /> : null}
      <Table<LogicalGroup>
        rowKey="name"
        columns={columns}
        dataSource={groups.data ?? []}
        loading={groups.isPending}
        scroll={{ x: 'max-content' }}
        pagination={false}
        locale={{ emptyText: groups.error ? t('common.loadFailed') : t('logicalGroups.empty') }}
      />
      <LogicalGroupDrawer open={!!editing} group={editing?.group ?? null} onClose={() => setEditing(null)} />
      <StickyDrawer group={sticky} onClose={() => setSticky(null)} />
    </>
  );
}
