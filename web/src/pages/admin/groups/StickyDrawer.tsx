import { ReloadOutlined } from '@ant-design/icons';
import { Button, Descriptions, Drawer, Flex, Input, Progress, Table, Typography } from 'antd';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useStickyView } from '../../../api/logicalGroups';
import type { StickyBinding } from '../../../api/types';
import { WIDE_DRAWER } from '../../../components/drawerSize';
import { QueryError } from '../../../components/QueryError';
import { HealthStateTag } from '../channels/HealthTag';
import { formatTime } from '../../../lib/format';
import { useFormat } from '../../../lib/useFormat';

/** The live sticky bindings of one group: how many sessions each route holds, and the bindings themselves. */
export function StickyDrawer({ group, onClose }: { group: string | null; onClose: () => void }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const [model, setModel] = useState('');
  const [typed, setTyped] = useState('');
  const view = useStickyView(group, model);
  const total = view.data?.total ?? 0;

  const close = () => {
    setModel('');
    setTyped('');
    onClose();
  };

  return (
    <Drawer open={!!group} onClose={close} title={t('logicalGroups.stickyTitle', { name: group ?? '' })} size={WIDE_DRAWER} destroyOnHidden>
      <Flex gap={8} style={{ marginBottom: 16 }}>
        <Input.Search
          allowClear
          placeholder={t('logicalGroups.stickyModel')}
          aria-label={t('logicalGroups.stickyModel')}
          value={typed}
          onChange={(e) => setTyped(e.target.value)}
          onSearch={(v) => setModel(v.trim())}
          style={{ maxWidth: 320 }}
        />
        <Button icon={<ReloadOutlined />} onClick={() => void view.refetch()} loading={view.isFetching}>
          {t('common.refresh')}
        </Button>
      </Flex>
      {view.error ? <QueryError error={view.error} onRetry={() => void view.refetch()} /> : null}
      <Descriptions column={1} size="small" bordered>
        <Descriptions.Item label={t('logicalGroups.stickyTotal')}>
          <span data-testid="sticky-total">{fmt.number(total)}</span>
          {view.data?.truncated ? (
            <Typography.Text type="secondary" style={{ marginInlineStart: 8 }}>
              {t('logicalGroups.stickyTruncated', { counted: fmt.number(view.data.counted ?? 0) })}
            </Typography.Text>
          ) : null}
        </Descriptions.Item>
      </Descriptions>
      <Typography.Title level={5} style={{ marginTop: 24 }}>
        {t('logicalGroups.stickyPerRoute')}
      </Typography.Title>
      <Table
        size="small"
        rowKey={(r) => `${r.group ?? ''}/${r.route}`}
        pagination={false}
        loading={view.isPending && !!group}
        dataSource={view.data?.routes ?? []}
        locale={{ emptyText: t('logicalGroups.stickyEmpty') }}
        columns={[
          { title: t('logs.group'), dataIndex: 'group', render: (v?: string) => v || group || t('common.none') },
          { title: t('logicalGroups.route'), dataIndex: 'route', render: (v: string) => v || t('logicalGroups.implicitRoute') },
          { title: t('logicalGroups.routeState'), dataIndex: 'state', render: (v?: string) => (v ? <HealthStateTag state={v} /> : t('common.none')) },
          { title: t('logicalGroups.stickyCount'), dataIndex: 'count', render: (v: number) => fmt.number(v) },
          {
            title: t('logicalGroups.stickyShare'),
            key: 'share',
            render: (_, r) => <Progress percent={total ? Math.round((r.count / total) * 100) : 0} size="small" style={{ minWidth: 120 }} />,
          },
        ]}
      />
      <Typography.Title level={5} style={{ marginTop: 24 }}>
        {t('logicalGroups.stickyBindings')}
      </Typography.Title>
      <Table<StickyBinding & { n: number }>
        size="small"
        rowKey="n"
        pagination={{ pageSize: 20, hideOnSinglePage: true }}
        scroll={{ x: 'max-content' }}
        dataSource={(view.data?.bindings ?? []).map((b, n) => ({ ...b, n }))}
        locale={{ emptyText: t('logicalGroups.stickyEmpty') }}
        columns={[
          { title: t('logicalGroups.stickyKind'), dataIndex: 'kind', render: (v: string) => t(`logicalGroups.level_${v}`, { defaultValue: v }) },
          { title: t('logs.group'), dataIndex: 'group', render: (v?: string) => v || group || t('common.none') },
          { title: t('logicalGroups.route'), dataIndex: 'route', render: (v: string) => v || t('logicalGroups.implicitRoute') },
          { title: t('logs.channel'), dataIndex: 'channel_id' },
          { title: t('logs.keyIndex'), dataIndex: 'key_index' },
          { title: t('logicalGroups.stickySince'), dataIndex: 'since', render: (v: string) => (v ? formatTime(v) : t('common.none')) },
        ]}
      />
    </Drawer>
  );
}
