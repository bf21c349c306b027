import { GithubOutlined, LoginOutlined } from '@ant-design/icons';
import { Button, Divider, Flex } from 'antd';
import { useTranslation } from 'react-i18next';
import { useSiteStatus } from '../../api/auth';
import { oauthStartURL } from '../../api/oauth';

// Loaded by the sign-in page only when the site has providers: most sites have none, and the divider and the
// buttons' code would be bytes every visitor downloads for nothing.
/** One button per enabled provider; each is a full-page navigation to the server's start URL. */
export default function OAuthButtons() {
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
