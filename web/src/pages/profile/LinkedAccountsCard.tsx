import { GithubOutlined, LoginOutlined } from '@ant-design/icons';
import { Alert, App, Button, Card, Flex, Popconfirm, Skeleton, Typography } from 'antd';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { useSiteStatus } from '../../api/auth';
import { useIdentities, useLinkProvider, useUnlinkIdentity } from '../../api/oauth';
import { QueryError } from '../../components/QueryError';
import { formatTime } from '../../lib/format';

/** The user's linked provider accounts: link another (consent: they start it while signed in) or unlink one. */
export function LinkedAccountsCard() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const status = useSiteStatus();
  const identities = useIdentities();
  const link = useLinkProvider();
  const unlink = useUnlinkIdentity();
  const [params, setParams] = useSearchParams();
  const providers = status.data?.oauth_providers ?? [];
  const nameOf = (slug: string) => providers.find((p) => p.slug === slug)?.name ?? slug;
  const linked = params.get('linked');
  const failed = params.get('oauth_error');

  useEffect(() => {
    if (linked) {
      message.success(t('oauth.linkedOk', { name: nameOf(linked) }));
      setParams({}, { replace: true });
    }
    // Once per return from a provider.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [linked]);

  const items = identities.data?.identities ?? [];
  if (providers.length === 0 && items.length === 0) return null;

  const onLink = async (slug: string) => {
    try {
      const { url } = await link.mutateAsync(slug);
      window.location.assign(url);
    } catch (err) {
      message.error((err as Error).message);
    }
  };

  const onUnlink = async (id: number) => {
    try {
      await unlink.mutateAsync(id);
      message.success(t('oauth.unlinked'));
    } catch (err) {
      message.error((err as Error).message);
    }
  };

  const linkedSlugs = new Set(items.map((i) => i.provider));
  return (
    <Card title={t('oauth.linkedTitle')} data-testid="linked-accounts">
      {failed ? (
        <Alert
          type="error"
          showIcon
          closable
          onClose={() => setParams({}, { replace: true })}
          title={t(`oauth.error_${failed}`, { defaultValue: t('oauth.error_generic', { code: failed }) })}
          style={{ marginBottom: 12 }}
        />
      ) : null}
      {identities.error ? <QueryError error={identities.error} onRetry={() => void identities.refetch()} /> : null}
      {identities.data && !identities.data.has_password ? (
        <Alert type="info" showIcon title={t('oauth.noPassword')} style={{ marginBottom: 12 }} />
      ) : null}
      {identities.isPending ? <Skeleton active paragraph={{ rows: 1 }} /> : null}
      {identities.data && items.length === 0 ? <Typography.Text type="secondary">{t('oauth.linkedEmpty')}</Typography.Text> : null}
      {items.map((i) => (
        <Flex key={i.id} align="center" justify="space-between" gap={12} style={{ padding: '8px 0' }} data-testid={`identity-${i.id}`}>
          <Flex align="center" gap={12}>
            {i.provider === 'github' ? <GithubOutlined /> : <LoginOutlined />}
            <div>
              <div>{nameOf(i.provider)}</div>
              <Typography.Text type="secondary">
                {[i.email, t('oauth.linkedAt', { time: formatTime(i.created_at) })].filter(Boolean).join(' · ')}
              </Typography.Text>
            </div>
          </Flex>
          <Popconfirm title={t('oauth.unlinkConfirm')} onConfirm={() => onUnlink(i.id)}>
            <Button size="small" danger loading={unlink.isPending && unlink.variables === i.id}>
              {t('oauth.unlink')}
            </Button>
          </Popconfirm>
        </Flex>
      ))}
      <Flex wrap gap={8} style={{ marginTop: 12 }}>
        {providers
          .filter((p) => !linkedSlugs.has(p.slug))
          .map((p) => (
            <Button
              key={p.slug}
              icon={p.type === 'github' ? <GithubOutlined /> : <LoginOutlined />}
              loading={link.isPending && link.variables === p.slug}
              onClick={() => void onLink(p.slug)}
              data-testid={`link-${p.slug}`}
            >
              {t('oauth.link', { name: p.name })}
            </Button>
          ))}
      </Flex>
    </Card>
  );
}
