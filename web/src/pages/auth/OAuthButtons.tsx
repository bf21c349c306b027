import { Alert } from 'antd';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';

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
