import { GithubOutlined, LoginOutlined } from '@ant-design/icons';
import { Alert, Button, Divider, Flex } from 'antd';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import { useSiteStatus } from '../../api/auth';
import { oauthStartURL } from '../../api/oauth';

const KNOWN_ERRORS = new Set([
  'oauth_provider_unknown',
  'oauth_invalid_state',
  'oauth_denied',
  'oauth_failed',
  'oauth_email_exists',
  'oauth_email_required',
  'oauth_identity_taken',
  'registration_closed',
  'user_disabled',
  'too_many_signups',
]);

/** The error a provider sign-in came back with (/login?error=<code>), in the user's language. */
export function OAuthError() {
  const { t } = useTranslation();
  const [params] = useSearchParams();
  const code = params.get('error');
  if (!code) return null;
  const text = KNOWN_ERRORS.has(code) ? t(`oauth.error_${code}`) : t('oauth.error_generic', { code });
  return <Alert type="error" showIcon title={text} style={{ marginBottom: 16 }} data-testid="oauth-error" />;
}

/** One button per enabled provider; each is a full-page navigation to the server's start URL. */
export function OAuthButtons() {
  const { t } = useTranslation();
  const status = useSiteStatus();
  const providers = status.data?.oauth_providers ?? [];
  if (providers.length === 0) return null;
  return (
    <>
      <Divider plain>{t('oauth.or')}</Divider>
      <Flex vertical gap={8}>
        {providers.map((p) => (
          <Button
            key={p.slug}
            block
            href={oauthStartURL(p.slug)}
            icon={p.type === 'github' ? <GithubOutlined /> : <LoginOutlined />}
            data-testid={`oauth-${p.slug}`}
          >
            {t('oauth.continueWith', { name: p.name })}
          </Button>
        ))}
      </Flex>
    </>
  );
}
