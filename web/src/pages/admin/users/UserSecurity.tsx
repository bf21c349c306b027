import { App, Button, Divider, Flex, Popconfirm, Tag, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { useEndUserSessions, useResetUserTwoFactor, useUserSessions } from '../../../api/security';
import type { User } from '../../../api/types';
import { SessionsTable } from '../../profile/SessionsCard';

/** In the admin's user drawer: the user's two-factor state (reset it) and sessions (end them all). */
export function UserSecurity({ user }: { user: User }) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const sessions = useUserSessions(user.id);
  const endAll = useEndUserSessions(user.id);
  const reset = useResetUserTwoFactor();

  return (
    <>
      <Divider titlePlacement="start">{t('security.twoFactorTitle')}</Divider>
      <Flex gap={8} align="center">
        <Tag color={user.totp_enabled ? 'green' : undefined}>{user.totp_enabled ? t('security.on') : t('security.off')}</Tag>
        <Popconfirm
          title={t('security.resetConfirm', { name: user.username })}
          onConfirm={() =>
            reset.mutate(user.id, {
              onSuccess: () => message.success(t('security.resetDone')),
              onError: (err) => message.error(err.message),
            })
          }
        >
          <Button size="small" danger disabled={!user.totp_enabled} loading={reset.isPending}>
            {t('security.reset')}
          </Button>
        </Popconfirm>
      </Flex>
      <Divider titlePlacement="start">{t('security.sessionsTitle')}</Divider>
      <Typography.Paragraph type="secondary">{t('security.adminSessionsHint')}</Typography.Paragraph>
      <SessionsTable items={sessions.data} loading={sessions.isLoading} />
      <Popconfirm
        title={t('security.endAllConfirm', { name: user.username })}
        onConfirm={() =>
          endAll.mutate(undefined, {
            onSuccess: (r) => message.success(t('security.ended', { count: r.ended })),
            onError: (err) => message.error(err.message),
          })
        }
      >
        <Button danger style={{ marginTop: 12 }} disabled={!sessions.data?.length} loading={endAll.isPending}>
          {t('security.endAll')}
        </Button>
      </Popconfirm>
    </>
  );
}
