import { DeleteOutlined, EditOutlined, EyeOutlined, PlusOutlined } from '@ant-design/icons';
import { App, Button, Input, Popconfirm, Space, Tag, Tooltip, Typography, type TableProps } from 'antd';
import { ResponsiveTable } from '../../components/ResponsiveTable';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useDeleteToken, useRevealToken, useTokens, useUpdateToken } from '../../api/tokens';
import type { Token } from '../../api/types';
import { KeyBudget } from '../../components/KeyBudget';
import { KeyGroup, KeyStatus } from '../../components/KeyMarks';
import { PageHeader } from '../../components/PageHeader';
import { QueryError } from '../../components/QueryError';
import { formatTime } from '../../lib/format';
import { useFormat } from '../../lib/useFormat';
import { KeyFormDrawer } from './KeyFormDrawer';
import { KeySecretModal } from './KeySecretModal';
import { QuickStart } from '../connect/QuickStart';
import { usePaging } from '../../lib/usePaging';
import { StepUpCancelled, useStepUp } from '../../components/StepUp';

export default function KeysPage() {
  const { t } = useTranslation();
  const fmt = useFormat();
  const { message } = App.useApp();
  const { page, size, setPage, pagination } = usePaging(20);
  const [q, setQ] = useState('');
  const tokens = useTokens({ page, size, q });
  const update = useUpdateToken();
  const remove = useDeleteToken();
  const reveal = useRevealToken();
  const [drawer, setDrawer] = useState<{ open: boolean; token: Token | null }>({ open: false, token: null });
  const [secret, setSecretState] = useState<{ key: string; created: boolean } | null>(null);
  // The quick start stays filled in with the last key shown in clear on this page (never stored elsewhere).
  const [shownKey, setShownKey] = useState<string | null>(null);
  const setSecret = (s: { key: string; created: boolean } | null) => {
    setSecretState(s);
    if (s) setShownKey(s.key);
  };

  const onToggle = (token: Token, enabled: boolean) =>
    update.mutate(
      { id: token.id, body: { status: enabled ? 'enabled' : 'disabled' } },
      { onError: (err) => message.error(err.message) },
    );
  const stepUp = useStepUp();
  const onReveal = (token: Token) =>
    stepUp
      .run((code) => reveal.mutateAsync({ id: token.id, code }))
      .then((res) => setSecret({ key: res.key, created: false }))
      .catch((err: Error) => {
        if (!(err instanceof StepUpCancelled)) message.error(err.message);
      });
  const onDelete = (token: Token) =>
    remove.mutate(token.id, {
      onSuccess: () => message.success(t('common.deleted')),
      onError: (err) => message.error(err.message),
    });

  const columns: TableProps<Token>['columns'] = [
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
      render: (_, token) => <KeyStatus token={token} lockedForOwner onChange={(checked) => onToggle(token, checked)} />,
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
      title: t('keys.expiresAt'),
      dataIndex: 'expires_at',
      key: 'expires',
      responsive: ['lg'],
      render: (v: string | null) => (v ? formatTime(v) : t('keys.never')),
    },
    {
      title: t('keys.lastUsed'),
      dataIndex: 'last_used_at',
      key: 'last_used',
      responsive: ['xl'],
      render: (v: string | null) => (v ? formatTime(v) : t('common.none')),
    },
    {
      title: t('common.actions'),
      key: 'actions',
      fixed: 'right',
      render: (_, token) => (
        <Space size={0}>
          <Tooltip title={t('keys.reveal')}>
            <Button type="text" aria-label={t('keys.reveal')} icon={<EyeOutlined />} onClick={() => onReveal(token)} />
          </Tooltip>
          <Tooltip title={t('common.edit')}>
            <Button
              type="text"
              aria-label={t('common.edit')}
              icon={<EditOutlined />}
              onClick={() => setDrawer({ open: true, token })}
            />
          </Tooltip>
          <Popconfirm
            title={t('keys.deleteConfirm')}
            okText={t('common.delete')}
            cancelText={t('common.cancel')}
            okButtonProps={{ danger: true }}
            onConfirm={() => onDelete(token)}
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
        title={t('keys.title')}
        extra={
          <>
            <Input.Search
              allowClear
              placeholder={t('keys.search')}
              aria-label={t('keys.search')}
              onSearch={(value) => {
                setQ(value.trim());
                setPage(1);
              }}
              style={{ width: 220 }}
            />
            <Button
              type="primary"
              icon={<PlusOutlined />}
              onClick={() => setDrawer({ open: true, token: null })}
              data-testid="create-key"
            >
              {t('keys.create')}
            </Button>
          </>
        }
      />
      {tokens.error ? <QueryError error={tokens.error} onRetry={() => void tokens.refetch()} /> : null}
      <QuickStart apiKey={shownKey} />
      <ResponsiveTable<Token>
        cardTitle={t('keys.title')}
        rowKey="id"
        columns={columns}
        dataSource={tokens.data?.items ?? []}
        loading={tokens.isFetching}
        locale={{ emptyText: tokens.error ? t('common.loadFailed') : t('keys.empty') }}
        pagination={pagination(tokens.data?.total)}
      />
      <KeyFormDrawer
        open={drawer.open}
        token={drawer.token}
        onClose={() => setDrawer({ open: false, token: null })}
        onCreated={(token) => setSecret({ key: token.key, created: true })}
      />
      <KeySecretModal secret={secret?.key ?? null} created={!!secret?.created} onClose={() => setSecret(null)} />
      {stepUp.modal}
    </>
  );
}
