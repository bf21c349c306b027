import { App, Button, Card, Popconfirm, Table, Tag, Tooltip, type TableProps } from 'antd';
import { useTranslation } from 'react-i18next';
import { useEndOtherSessions, useEndSession, useSessions, type SessionInfo } from '../../api/security';
import { QueryError } from '../../components/QueryError';
import { formatTime } from '../../lib/format';

/** A table of signed-in sessions; `onEnd` ends one (absent: read-only). Shared by the profile and admin views. */
export function SessionsTable({
  items,
  loading,
  onEnd,
}: {
  items?: SessionInfo[];
  loading?: boolean;
  onEnd?: (s: SessionInfo) => void;
}) {
  const { t } = useTranslation();
  const columns: TableProps<SessionInfo>['columns'] = [
    {
      title: t('security.device'),
      key: 'device',
      render: (_, s) => (
        <Tooltip title={s.user_agent}>
          {s.device} {s.current ? <Tag color="blue">{t('security.thisDevice')}</Tag> : null}
        </Tooltip>
      ),
    },
    { title: t('security.ip'), dataIndex: 'ip', key: 'ip' },
    { title: t('security.signedIn'), dataIndex: 'created_at', key: 'created', render: (v: string) => formatTime(v) },
    { title: t('security.lastSeen'), dataIndex: 'last_seen', key: 'seen', render: (v: string) => formatTime(v) },
  ];
  if (onEnd) {
    columns.push({
      title: '',
      key: 'end',
      render: (_, s) =>
        s.current ? null : (
          <Popconfirm title={t('security.endConfirm')} onConfirm={() => onEnd(s)}>
            <Button size="small" danger>
              {t('security.end')}
            </Button>
          </Popconfirm>
        ),
    });
  }
  return <Table<SessionInfo> rowKey="id" size="small" columns={columns} dataSource={items} loading={loading} pagination={false} />;
}

/** Profile card: the user's own sessions; end one, or all but this one. */
export function SessionsCard() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const sessions = useSessions();
  const end = useEndSession();
  const endOthers = useEndOtherSessions();
  const others = (sessions.data ?? []).filter((s) => !s.current).length;

  return (
    <Card
      title={t('security.sessionsTitle')}
      extra={
        <Popconfirm title={t('security.endOthersConfirm')} onConfirm={() =>
          endOthers.mutate(undefined, {
            onSuccess: (r) => message.success(t('security.ended', { count: r.ended })),
            onError: (err) => message.error(err.message),
          })
        }>
          <Button size="small" disabled={others === 0} loading={endOthers.isPending}>
            {t('security.endOthers')}
          </Button>
        </Popconfirm>
      }
    >
      {sessions.error ? <QueryError error={sessions.error} onRetry={() => void sessions.refetch()} /> : null}
      <SessionsTable
        items={sessions.data}
        loading={sessions.isLoading}
        onEnd={(s) => end.mutate(s.id, { onError: (err) => message.error(err.message) })}
      />
    </Card>
  );
}
