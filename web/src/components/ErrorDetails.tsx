import { App } from 'antd';
import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { errorParts, type ErrorParts } from '../lib/errors';

/**
 * The raw text behind an error (an upstream body, the server's own wording) in a native disclosure: collapsed
 * by default, its "Details" summary reachable and opened with the keyboard.
 */
export function ErrorDetails({ detail }: { detail?: string }) {
  const { t } = useTranslation();
  if (!detail) return null;
  return (
    <details className="tg-error-details" data-testid="error-details">
      <summary>{t('errors.details')}</summary>
      <pre className="tg-mono">{detail}</pre>
    </details>
  );
}

/** An error's sentence, with its detail behind the disclosure. */
export function ErrorText({ message, detail }: ErrorParts) {
  return (
    <span className="tg-error-text">
      <span>{message}</span>
      <ErrorDetails detail={detail} />
    </span>
  );
}

/**
 * Shows an error as a toast: the gateway's sentence, and when there is raw text behind it, a "Details"
 * disclosure (the toast then stays 10 s, and longer while hovered).
 */
export function useShowError(): (err: unknown) => void {
  const { message } = App.useApp();
  const { t } = useTranslation();
  return useCallback(
    (err: unknown) => {
      const parts = isParts(err) ? err : errorParts(err, t);
      if (!parts.detail) void message.error(parts.message);
      else void message.error({ content: <ErrorText {...parts} />, duration: 10 });
    },
    [message, t],
  );
}

function isParts(v: unknown): v is ErrorParts {
  return typeof v === 'object' && v !== null && !(v instanceof Error) && typeof (v as ErrorParts).message === 'string';
}
