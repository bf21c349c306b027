import i18n from '../i18n';
import { ApiClient } from './client';

/** The one client the app uses; it speaks the current UI language. */
export const api = new ApiClient({
  getLanguage: () => i18n.language || 'en',
  translate: (key, vars) => i18n.t(key, vars),
  hasText: (key) => i18n.exists(key),
});
