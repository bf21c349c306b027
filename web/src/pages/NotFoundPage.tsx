import { Button, Result } from 'antd';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';

export function NotFoundPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  return (
    <Result
      status="404"
      title={t('errors.notFoundTitle')}
      subTitle={t('errors.notFound')}
      extra={
        <Button type="primary" onClick={() => navigate('/console')}>
          {t('common.backHome')}
        </Button>
      }
    />
  );
}
