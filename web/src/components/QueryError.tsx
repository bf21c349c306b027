import { Alert, Button } from 'antd';
import { useTranslation } from 'react-i18next';

/** The error state of a list or page: the server's message and a retry button. */
export function QueryError({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const { t } = useTranslation();
  const message = error instanceof Error ? error.message : t('errors.unknown');
  return (
    <Alert
      type="error"
      showIcon
      title={t('common.loadFailed')}
      description={message}
      style={{ marginBottom: 16 }}
      action={
        onRetry ? (
          <Button size="small" onClick={onRetry}>
            {t('common.retry')}
          </Button>
        ) : undefined
      }
    />
  );
}
