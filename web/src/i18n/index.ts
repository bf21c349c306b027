import dayjs from 'dayjs';
import 'dayjs/locale/zh-cn';
import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import en from './en';
import zhCN from './zh-CN';

export type Language = 'en' | 'zh-CN';

/** The languages offered in the header switch; labels are each language's own name. */
export const LANGUAGES: { code: Language; label: string }[] = [
  { code: 'en', label: 'English' },
  { code: 'zh-CN', label: '简体中文' },
];

export const LANGUAGE_STORAGE_KEY = 'tollgate.lang';

function normalize(tag: string | null | undefined): Language | null {
  if (!tag) return null;
  const lower = tag.toLowerCase();
  if (lower.startsWith('zh')) return 'zh-CN';
  if (lower.startsWith('en')) return 'en';
  return null;
}

/** The remembered choice first, then the browser's preferred languages, then English. */
export function detectLanguage(): Language {
  try {
    const stored = normalize(localStorage.getItem(LANGUAGE_STORAGE_KEY));
    if (stored) return stored;
  } catch {
    // storage may be blocked; fall through to the browser's languages
  }
  const preferred = typeof navigator === 'undefined' ? [] : [...(navigator.languages ?? []), navigator.language];
  for (const tag of preferred) {
    const lang = normalize(tag);
    if (lang) return lang;
  }
  return 'en';
}

function applyLanguage(lng: string): void {
  dayjs.locale(lng === 'zh-CN' ? 'zh-cn' : 'en');
  if (typeof document !== 'undefined') document.documentElement.lang = lng;
}

void i18n.use(initReactI18next).init({
  resources: { en: { translation: en }, 'zh-CN': { translation: zhCN } },
  lng: detectLanguage(),
  fallbackLng: 'en',
  supportedLngs: ['en', 'zh-CN'],
  interpolation: { escapeValue: false },
  initAsync: false,
});
applyLanguage(i18n.language);

i18n.on('languageChanged', (lng) => {
  applyLanguage(lng);
  try {
    localStorage.setItem(LANGUAGE_STORAGE_KEY, lng);
  } catch {
    // not remembered when storage is blocked
  }
});

/** Switches the UI language and remembers it. */
export function changeLanguage(lng: Language): Promise<unknown> {
  return i18n.changeLanguage(lng);
}

export default i18n;
