import { DeleteOutlined, EditOutlined, ExperimentOutlined, HeartOutlined, PlusOutlined, ThunderboltOutlined } from '@ant-design/icons';
import { App, Button, Input, Popconfirm, Select, Space, Switch, Tag, Tooltip, type TableProps } from 'antd';
import { ResponsiveTable } from '../../../components/ResponsiveTable';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  useChannels,
  useDeleteChannel,
  useStartChannelTests,
  useTestChannel,
  useUpdateChannel,
  type ChannelQuery,
} from '../../../api/channels';
import type { Channel, ChannelStatus } from '../../../api/types';
import { PageHeader } from '../../../components/PageHeader';
import { QueryError } from '../../../components/QueryError';
import { useFormat } from '../../../lib/useFormat';
import { ChannelFormDrawer } from './ChannelFormDrawer';
import { ChannelHealthDrawer } from './ChannelHealthDrawer';
import { ChannelTestModal } from './ChannelTestModal';
import { InlineNumber } from './InlineNumber';
import { useShowError } from '../../../components/ErrorDetails';
import { CHANNEL_TYPES } from './channelForm';
import { FleetHourCell } from './FleetSection';
import { ChannelMetrics, HealthCell } from './HealthTag';

const STATUS_COLORS: Record<ChannelStatus, string> = { enabled: 'success', disabled: 'default', auto_disabled: 'error' };

export default function ChannelsPage() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { message } = App.useApp();
  const showError = useShowError();
  const [query, setQuery] = useState<ChannelQuery>({ page: 1, size: 20 });
  const channels = useChannels(query);
  const update = useUpdateChannel();
  const remove = useDeleteChannel();
  const test = useTestChannel();
  const startTests = useStartChannelTests();
  const [drawer, setDrawer] = useState<{ open: boolean; channel: Channel | null }>({ open: false, channel: null });
  const [healthOf, setHealthOf] = useState<Channel | null>(null);
  const [jobId, setJobId] = useState<string | null>(null);
  const [selected, setSelected] = useState<number[]>([]);
  const [testingId, setTestingId] = useState<number | null>(null);
  const items = channels.data?.items ?? [];

  const setFilter = (patch: Partial<ChannelQuery>) => setQuery((q) => ({ ...q, ...patch, page: 1 }));

  // Inline priority / weight: one PATCH of the one field.
  const saveField = (channel: Channel, body: { priority?: number; weight?: number }) =>
    update.mutate(
      { id: channel.id, body },
      {
        onSuccess: () => message.success(t('channels.savedField', { name: channel.name })),
        onError: (err) => message.error(err.message),
      },
    );

  const onTest = (channel: Channel) => {
    setTestingId(channel.id);
    test.mutate(
      { id: channel.id, model: channel.test_model || undefined },
      {
        onSuccess: (res) =>
          res.ok
            ? message.success(t('channels.testPassed', { name: channel.name, latency: fmt.duration(res.latency_ms) }))
            : // The gateway's sentence (the error class in the UI's language); the upstream's text behind "Details".
              showError({
                message: t('channels.testFailedWith', {
                  name: channel.name,
                  error: res.error_class ? t(`logs.errorClass.${res.error_class}`, { defaultValue: res.error_class }) : res.status,
                }),
                detail: res.error || undefined,
              }),
        onError: (err) => message.error(err.message),
        onSettled: () => setTestingId(null),
      },
    );
  };

  const onStartTests = (ids?: number[]) =>
    startTests.mutate(ids && ids.length ? { ids } : {}, {
      onSuccess: (res) => setJobId(res.id),
      onError: (err) => message.error(err.message),
    });

  const setStatus = async (ids: number[], enabled: boolean) => {
    try {
      await Promise.all(ids.map((id) => update.mutateAsync({ id, body: { status: enabled ? 'enabled' : 'disabled' } })));
      message.success(t('common.saved'));
    } catch (err) {
      message.error((err as Error).message);
    }
  };

  const columns: TableProps<Channel>['columns'] = [
    { title: t('channels.id'), dataIndex: 'id', key: 'id', width: 64 },
    { title: t('channels.name'), dataIndex: 'name', key: 'name', ellipsis: true },
    { title: t('channels.type'), dataIndex: 'type', key: 'type', responsive: ['md'], render: (v: string) => t(`channels.type_${v}`) },
    {
      title: t('common.status'),
      key: 'status',
      render: (_, c) => (
        <Space size={4}>
          <Switch
            size="small"
            checked={c.status === 'enabled'}
            aria-label={t('channels.enabled')}
            onChange={(on) => void setStatus([c.id], on)}
          />
          {c.status !== 'enabled' ? <Tag color={STATUS_COLORS[c.status]}>{t(`channels.status_${c.status}`)}</Tag> : null}
        </Space>
      ),
    },
    { title: t('channels.health'), key: 'health', render: (_, c) => <HealthCell channel={c} /> },
    { title: t('channels.successLatency'), key: 'metrics', responsive: ['lg'], render: (_, c) => <ChannelMetrics channel={c} /> },
    { title: t('fleet.column'), key: 'fleet', responsive: ['lg'], render: (_, c) => <FleetHourCell channel={c} /> },
    {
      title: t('channels.models'),
      dataIndex: 'models',
      key: 'models',
      responsive: ['xl'],
      render: (models: string[]) => (
        <Tooltip title={(models ?? []).join(', ')}>
          <span>{t('channels.modelCount', { count: models?.length ?? 0 })}</span>
        </Tooltip>
      ),
    },
    {
      title: t('channels.priority'),
      dataIndex: 'priority',
      key: 'priority',
      responsive: ['lg'],
      render: (v: number, c) => (
        <InlineNumber
          value={v}
          min={-1_000_000}
          max={1_000_000}
          label={t('channels.priorityOf', { name: c.name })}
          saving={update.isPending && update.variables?.id === c.id}
          onSave={(priority) => saveField(c, { priority })}
        />
      ),
    },
    {
      title: t('channels.weight'),
      dataIndex: 'weight',
      key: 'weight',
      responsive: ['lg'],
      render: (v: number, c) => (
        <InlineNumber
          value={v}
          min={0}
          max={1_000_000}
          label={t('channels.weightOf', { name: c.name })}
          saving={update.isPending && update.variables?.id === c.id}
          onSave={(weight) => saveField(c, { weight })}
        />
      ),
    },
    { title: t('channels.tag'), dataIndex: 'tag', key: 'tag', responsive: ['xl'], render: (v: string) => (v ? <Tag>{v}</Tag> : null) },
    {
      title: t('common.actions'),
      key: 'actions',
      fixed: 'right',
      render: (_, c) => (
        <Space size={0}>
          <Tooltip title={t('channels.test')}>
            <Button
              type="text"
              aria-label={t('channels.test')}
              icon={<ExperimentOutlined />}
              loading={testingId === c.id}
              onClick={() => onTest(c)}
              data-testid={`test-channel-${c.id}`}
            />
          </Tooltip>
          <Tooltip title={t('channels.health')}>
            <Button type="text" aria-label={t('channels.health')} icon={<HeartOutlined />} onClick={() => setHealthOf(c)} />
          </Tooltip>
          <Tooltip title={t('common.edit')}>
            <Button type="text" aria-label={t('common.edit')} icon={<EditOutlined />} onClick={() => setDrawer({ open: true, channel: c })} />
          </Tooltip>
          <Popconfirm
            title={t('channels.deleteConfirm', { name: c.name })}
            okText={t('common.delete')}
            cancelText={t('common.cancel')}
            okButtonProps={{ danger: true }}
            onConfirm={() => remove.mutate(c.id, { onError: (err) => message.error(err.message) })}
          >
            <Button type="text" danger aria-label={t('common.delete')} icon={<DeleteOutlined />} />
          </Popconfirm>
        </Space>
      ),
    },
  ];

  return (
    <>
      <PageHeader
        title={t('channels.title')}
        extra={
          <>
            <Button icon={<ThunderboltOutlined />} onClick={() => onStartTests()} loading={startTests.isPending} data-testid="test-all">
              {t('channels.testAll')}
            </Button>
            <Button type="primary" icon={<PlusOutlined />} onClick={() => setDrawer({ open: true, channel: null })} data-testid="create-channel">
              {t('channels.create')}
            </Button>
          </>
        }
      />
      <Space wrap style={{ marginBottom: 16 }}>
        <Input.Search allowClear placeholder={t('channels.search')} aria-label={t('channels.search')} onSearch={(q) => setFilter({ q: q.trim() })} style={{ width: 200 }} />
        <Select
          allowClear
          placeholder={t('channels.type')}
          aria-label={t('channels.type')}
          style={{ width: 170 }}
          onChange={(type) => setFilter({ type })}
          options={CHANNEL_TYPES.map((type) => ({ value: type, label: t(`channels.type_${type}`) }))}
        />
        <Select
          allowClear
          placeholder={t('common.status')}
          aria-label={t('common.status')}
          style={{ width: 150 }}
          onChange={(status) => setFilter({ status })}
          options={(['enabled', 'disabled', 'auto_disabled'] as const).map((s) => ({ value: s, label: t(`channels.status_${s}`) }))}
        />
        <Input.Search allowClear placeholder={t('channels.model')} aria-label={t('channels.model')} onSearch={(model) => setFilter({ model: model.trim() })} style={{ width: 160 }} />
        <Input.Search allowClear placeholder={t('channels.tag')} aria-label={t('channels.tag')} onSearch={(tag) => setFilter({ tag: tag.trim() })} style={{ width: 140 }} />
        <Input.Search allowClear placeholder={t('channels.group')} aria-label={t('channels.group')} onSearch={(group) => setFilter({ group: group.trim() })} style={{ width: 140 }} />
      </Space>
      {selected.length > 0 ? (
        <Space wrap style={{ marginBottom: 12 }}>
          <span>{t('common.selected', { count: selected.length })}</span>
          <Button size="small" onClick={() => void setStatus(selected, true)}>
            {t('channels.enableSelected')}
          </Button>
          <Button size="small" onClick={() => void setStatus(selected, false)}>
            {t('channels.disableSelected')}
          </Button>
          <Button size="small" onClick={() => onStartTests(selected)}>
            {t('channels.testSelected')}
          </Button>
        </Space>
      ) : null}
      {channels.error ? <QueryError error={channels.error} onRetry={() => void channels.refetch()} /> : null}
      <ResponsiveTable<Channel>
        cardTitle={t('channels.title')}
        rowKey="id"
        columns={columns}
        dataSource={items}
        loading={channels.isPending}
        rowSelection={{ selectedRowKeys: selected, onChange: (keys) => setSelected(keys as number[]) }}
        locale={{ emptyText: channels.error ? t('common.loadFailed') : t('channels.empty') }}
        pagination={{
          current: query.page,
          pageSize: query.size,
          total: channels.data?.total ?? 0,
          showSizeChanger: true,
          onChange: (page, size) => setQuery((q) => ({ ...q, page, size })),
        }}
      />
      <ChannelFormDrawer open={drawer.open} channel={drawer.channel} onClose={() => setDrawer({ open: false, channel: null })} />
      <ChannelHealthDrawer channel={healthOf} onClose={() => setHealthOf(null)} />
      <ChannelTestModal jobId={jobId} channels={items} onClose={() => setJobId(null)} />
    </>
  );
}
