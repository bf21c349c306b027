import { Result } from 'antd';
import { useTranslation } from 'react-i18next';

/** What a signed-in user who is not an admin sees on an admin page. */
export function ForbiddenPage() {
  const { t } = useTranslation();
  return <Result status="403" title={t('errors.forbiddenTitle')} subTitle={t('errors.forbidden')} />;
}
