import type { TFunction } from 'i18next';
import { ApiError } from '../api/client';

export { apiErrorText, readableMessage } from './errorText';

/** What a toast says for any thrown error. */
export function errorMessage(err: unknown, t: TFunction): string {
  return errorParts(err, t).message;
}

/** An error as the console shows it: the gateway's own sentence up front, the raw text behind "Details". */
export interface ErrorParts {
  message: string;
  detail?: string;
}

/**
 * Splits any thrown error into what is shown and what is disclosed: an API error's message is the catalogue's
 * or the server's localized text, with the server's raw text (e.g. an upstream body) as the detail; a plain
 * error whose text is upstream JSON shows a generic sentence in the UI's language and keeps the JSON as detail.
 */
export function errorParts(err: unknown, t: TFunction): ErrorParts {
  if (err instanceof ApiError) return { message: err.message || t('errors.unknown'), detail: err.detail };
  if (err instanceof Error) return upstreamParts(err.message, t('errors.upstream'), t('errors.unknown'));
  return { message: t('errors.unknown') };
}

/**
 * An upstream's error text (the body a channel or model answered with): never shown raw up front. JSON goes
 * behind the disclosure under `summary`; plain text is shown only when it is not JSON.
 */
export function upstreamParts(raw: string | null | undefined, summary: string, fallback: string): ErrorParts {
  const text = (raw ?? '').trim();
  if (!text) return { message: fallback };
  const looksStructured = text.startsWith('{') || text.startsWith('[');
  if (!looksStructured) return { message: text };
  return { message: summary, detail: text };
}
