import type { TFunction } from 'i18next';
import { ApiError } from '../api/client';
import { readableMessage } from './errorText';

export { apiErrorText, readableMessage } from './errorText';

/** What a toast says for any thrown error. */
export function errorMessage(err: unknown, t: TFunction): string {
  if (err instanceof ApiError) return err.message || t('errors.unknown');
  if (err instanceof Error) return readableMessage(err.message) ?? t('errors.unknown');
  return t('errors.unknown');
}
