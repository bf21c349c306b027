import { DownloadOutlined, ReloadOutlined } from '@ant-design/icons';
import { Button, DatePicker, Flex, Input, InputNumber, Select, Space, Tag, Tooltip, type TableProps } from 'antd';
import { ResponsiveTable } from '../../components/ResponsiveTable';
import dayjs, { type Dayjs } from 'dayjs';
import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { logExportPath, useLogs, useLogTotals } from '../../api/logs';
import { useAllTokens } from '../../api/tokens';
import type { LogFilter, LogKind, UsageLog } from '../../api/types';
import { PageHeader } from '../../components/PageHeader';
import { QueryError } from '../../components/QueryError';
import { downloadFile } from '../../lib/download';
import { useShowError } from '../../components/ErrorDetails';
import { formatTime } from '../../lib/format';
import { useFormat } from '../../lib/useFormat';
import { LogDetailDrawer } from './LogDetailDrawer';

type Range = [Dayjs | null, Dayjs | null] | null;

/** Usage logs with filters, "load more" cursor pagination and a detail drawer; `admin` shows everyone's. */
export function LogsView({ admin = false }: { admin?: boolean }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  const [range, setRange] = useState<Range>(null);
  const [model, setModel] = useState('');
  const [tokenId, setTokenId] = useState<number | undefined>();
  const [status, setStatus] = useState<'success' | 'error' | undefined>();
  const [userId, setUserId] = useState<number | undefined>();
  const [channelId, setChannelId] = useState<number | undefined>();
  const [requestId, setRequestId] = useState('');
  const [clientRequestId, setClientRequestId] = useState('');
  const [kind, setKind] = useState<LogKind>('usage');
  const [selected, setSelected] = useState<UsageLog | null>(null);
  const [exporting, setExporting] = useState(false);
  const showError = useShowError();
  const tokens = useAllTokens();

  const filter = useMemo<LogFilter>(
    () => ({
      from: range?.[0]?.toISOString(),
      to: range?.[1]?.toISOString(),
      model: model || undefined,
      token_id: tokenId,
      status,
      request_id: requestId || undefined,
      client_request_id: clientRequestId || undefined,
      ...(admin ? { user_id: userId, channel_id: channelId } : {}),
      type: kind === 'usage' ? undefined : kind,
    }),
    [range, model, tokenId, status, requestId, clientRequestId, admin, userId, channelId, kind],
  );
  const logs = useLogs(filter, admin);
  const totals = useLogTotals(filter, admin);

  async function exportCSV() {
    setExporting(true);
    try {
      await downloadFile(logExportPath(admin), { ...filter }, 'tollgate-logs.csv');
    } catch (err) {
      showError(err);
    } finally {
      setExporting(false);
    }
  }
  const rows = useMemo(() => logs.data?.pages.flatMap((p) => p.items ?? []) ?? [], [logs.data]);

  const statusTag = (log: UsageLog) => (
    <Tag color={log.status === 'success' ? 'success' : 'error'} data-testid="log-status" style={{ marginInlineEnd: 0 }}>
      {log.status === 'success' ? t('logs.status_success') : log.error_class
          ? t(`logs.errorClass.${log.error_class}`, { defaultValue: log.error_class })
          : t('logs.status_error')}
    </Tag>
  );
  const columns: TableProps<UsageLog>['columns'] = [
    { title: t('logs.time'), dataIndex: 'created_at', key: 'time', render: (v: string) => formatTime(v) },
    ...(admin
      ? [
          {
            title: t('logs.user'),
            key: 'user',
            render: (_: unknown, log: UsageLog) =>
              log.is_test ? <Tag color="purple">{t('logs.channelTest')}</Tag> : log.username || log.user_id,
          },
        ]
      : []),
    {
      title: t('logs.key'),
      key: 'key',
      responsive: ['md'],
      render: (_, log) => (log.is_test ? t('logs.channelTestKey') : log.token_name || log.token_id),
    },
    {
      title: t('logs.model'),
      dataIndex: 'model',
      key: 'model',
      render: (m: string, log) =>
        log.upstream_model && log.upstream_model !== m ? (
          <Tooltip title={t('logs.upstreamAs', { model: log.upstream_model })}>{m}</Tooltip>
        ) : (
          m
        ),
    },
    ...(admin
      ? [{ title: t('logs.channel'), key: 'channel', render: (_: unknown, log: UsageLog) => log.channel_name || log.channel_id }]
      : []),
    {
      title: t('logs.tokensInOut'),
      key: 'tokens',
      render: (_, log) => `${fmt.number(log.prompt_tokens)} / ${fmt.number(log.completion_tokens)}`,
    },
    {
      title: t('logs.cost'),
      dataIndex: 'cost',
      key: 'cost',
      render: (v: number) => <span data-testid="log-cost">{fmt.money(v)}</span>,
    },
    { title: t('logs.latency'), dataIndex: 'elapsed_ms', key: 'latency', render: (v: number) => fmt.duration(v) },
    {
      title: t('logs.firstByte'),
      dataIndex: 'first_byte_ms',
      key: 'first_byte',
      responsive: ['md'],
      render: (v: number) => fmt.duration(v),
    },
    {
      title: t('common.status'),
      key: 'status',
      render: (_, log) => statusTag(log),
    },
  ];

  // Below ~600 px (ResponsiveTable) a row is this compact card with the facts that matter (time, model, cost,
  // status), so nothing scrolls sideways; the drawer has the rest.
  const logCard = (log: UsageLog) => (
    <Flex vertical gap={2} data-testid="log-card">
      <Flex justify="space-between" gap={8}>
        <span style={{ overflowWrap: 'anywhere' }}>
          {log.is_test && <Tag color="purple">{t('logs.channelTest')}</Tag>}
          {log.model}
        </span>
        <span data-testid="log-cost" style={{ whiteSpace: 'nowrap' }}>{fmt.money(log.cost)}</span>
      </Flex>
      <Flex justify="space-between" gap={8} align="center">
        <Flex gap={6} wrap style={{ fontSize: 12 }} className="tg-log-card-meta">
          <span>{formatTime(log.created_at)}</span>
          <span>
            {fmt.number(log.prompt_tokens)} / {fmt.number(log.completion_tokens)}
          </span>
          <span>{fmt.duration(log.elapsed_ms)}</span>
        </Flex>
        {statusTag(log)}
      </Flex>
    </Flex>
  );

  return (
    <>
      <PageHeader
        title={admin ? t('logs.allTitle') : t('logs.title')}
        extra={
          <Space>
            <Button icon={<DownloadOutlined />} loading={exporting} onClick={() => void exportCSV()}>
              {t('logs.exportCsv')}
            </Button>
            <Button
              icon={<ReloadOutlined />}
              onClick={() => {
                void logs.refetch();
                void totals.refetch();
              }}
            >
              {t('common.refresh')}
            </Button>
          </Space>
        }
      />
      <Flex gap={8} wrap style={{ marginBottom: 16 }}>
        <DatePicker.RangePicker
          showTime
          allowEmpty={[true, true]}
          value={range}
          aria-label={t('logs.time')}
          onChange={(value) => setRange(value as Range)}
          presets={[
            { label: t('logs.today'), value: [dayjs().startOf('day'), dayjs().endOf('day')] },
            { label: t('logs.last7d'), value: [dayjs().subtract(6, 'day').startOf('day'), dayjs().endOf('day')] },
            { label: t('logs.last30d'), value: [dayjs().subtract(29, 'day').startOf('day'), dayjs().endOf('day')] },
          ]}
        />
        <Input.Search
          allowClear
          placeholder={t('logs.model')}
          aria-label={t('logs.model')}
          onSearch={(value) => setModel(value.trim())}
          style={{ width: 180 }}
        />
        <Input.Search
          allowClear
          placeholder={t('logs.searchRequestId')}
          aria-label={t('logs.searchRequestId')}
          onSearch={(value) => setRequestId(value.trim())}
          style={{ width: 220 }}
        />
        <Input.Search
          allowClear
          placeholder={t('logs.searchClientRequestId')}
          aria-label={t('logs.searchClientRequestId')}
          onSearch={(value) => setClientRequestId(value.trim())}
          style={{ width: 220 }}
        />
        {admin ? (
          <>
            <InputNumber
              min={1}
              placeholder={t('logs.userId')}
              aria-label={t('logs.userId')}
              value={userId}
              onChange={(v) => setUserId(v ?? undefined)}
              style={{ width: 120 }}
            />
            <InputNumber
              min={1}
              placeholder={t('logs.channelId')}
              aria-label={t('logs.channelId')}
              value={channelId}
              onChange={(v) => setChannelId(v ?? undefined)}
              style={{ width: 120 }}
            />
            <InputNumber
              min={1}
              placeholder={t('logs.keyId')}
              aria-label={t('logs.keyId')}
              value={tokenId}
              onChange={(v) => setTokenId(v ?? undefined)}
              style={{ width: 120 }}
            />
          </>
        ) : (
          <Select
            allowClear
            placeholder={t('logs.key')}
            aria-label={t('logs.key')}
            value={tokenId}
            onChange={setTokenId}
            style={{ width: 180 }}
            loading={tokens.isPending}
            options={(tokens.data?.items ?? []).map((k) => ({ value: k.id, label: k.name }))}
          />
        )}
        <Select
          allowClear
          placeholder={t('common.status')}
          aria-label={t('common.status')}
          value={status}
          onChange={setStatus}
          style={{ width: 140 }}
          options={[
            { value: 'success', label: t('logs.status_success') },
            { value: 'error', label: t('logs.status_error') },
          ]}
        />
        {admin ? (
          <Select<LogKind>
            aria-label={t('logs.kind')}
            value={kind}
            onChange={setKind}
            style={{ width: 160 }}
            options={[
              { value: 'usage', label: t('logs.kind_usage') },
              { value: 'test', label: t('logs.kind_test') },
              { value: 'all', label: t('logs.kind_all') },
            ]}
          />
        ) : null}
      </Flex>
      <div data-testid="log-totals" style={{ marginBottom: 12 }}>
        {totals.data
          ? t('logs.totals', {
              requests: fmt.number(totals.data.requests),
              prompt: fmt.number(totals.data.prompt_tokens),
              completion: fmt.number(totals.data.completion_tokens),
              cost: fmt.money(totals.data.cost),
            })
          : null}
      </div>
      {logs.error ? <QueryError error={logs.error} onRetry={() => void logs.refetch()} /> : null}
      <ResponsiveTable<UsageLog>
        cardTitle={t('logs.request')}
        card={logCard}
        rowKey={(log) => log.id ?? log.request_id}
        columns={columns}
        dataSource={rows}
        loading={logs.isPending || (logs.isFetching && !logs.isFetchingNextPage)}
        pagination={false}
        locale={{ emptyText: logs.error ? t('common.loadFailed') : t('logs.empty') }}
        onRow={(log) => ({
          onClick: () => setSelected(log),
          // Rows open by keyboard too: Tab to a row, Enter (or Space) opens its details.
          tabIndex: 0,
          'aria-label': t('logs.openRow', { model: log.model, time: formatTime(log.created_at) }),
          onKeyDown: (e: React.KeyboardEvent) => {
            if (e.key === 'Enter' || e.key === ' ') {
              e.preventDefault();
              setSelected(log);
            }
          },
          style: { cursor: 'pointer' },
        })}
        data-testid="logs-table"
      />
      <Flex justify="center" style={{ marginTop: 16 }}>
        {logs.hasNextPage ? (
          <Button onClick={() => void logs.fetchNextPage()} loading={logs.isFetchingNextPage}>
            {t('logs.loadMore')}
          </Button>
        ) : rows.length > 0 ? (
          <span>{t('logs.noMore')}</span>
        ) : null}
      </Flex>
      <LogDetailDrawer log={selected} onClose={() => setSelected(null)} />
    </>
  );
}
