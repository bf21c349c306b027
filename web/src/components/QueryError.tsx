import { Alert, Button } from 'antd';
import { useTranslation } from 'react-i18next';
import { errorParts } from '../lib/errors';
import { ErrorText } from './ErrorDetails';

/** The error state of a list or page: the server's message and a retry button. */
export function QueryError({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const { t } = useTranslation();
  const parts = errorParts(error, t);
  return (
    <Alert
      type="error"
      showIcon
      title={t('common.loadFailed')}
      description={<ErrorText {...parts} />}
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
