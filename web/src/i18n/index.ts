import i18n from 'i18next';
import type { Locale } from 'antd/es/locale';
import { initReactI18next } from 'react-i18next';

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

/**
 * Each language's catalogue (and antd's texts for it) is a chunk of its own, loaded when the language is first
 * used: a page downloads only the language it shows. English antd texts are antd's built-in default.
 */
const loaders: Record<Language, () => Promise<{ translation: object; antd?: Locale }>> = {
  en: async () => ({ translation: (await import('./en')).default }),
  'zh-CN': async () => {
    const [translation, antd] = await Promise.all([import('./zh-CN'), import('antd/es/locale/zh_CN')]);
    return { translation: translation.default, antd: antd.default };
  },
};

/** The admin pages' text, a chunk per language loaded with the first admin page (`loadAdminCatalogue`). */
const adminLoaders: Record<Language, () => Promise<{ default: object }>> = {
  en: () => import('./en-admin'),
  'zh-CN': () => import('./zh-CN-admin'),
};
const adminLoaded = new Set<Language>();
let adminWanted = false;

const antdLocales: Partial<Record<Language, Locale>> = {};

/** antd's texts (date picker, pagination, empty states) for a loaded language; undefined means antd's English. */
export function antdLocale(lng: string): Locale | undefined {
  return antdLocales[lng as Language];
}

/** Loads a language's catalogue once (with the admin pages' part once an admin page was opened). */
export async function loadLanguage(lng: Language): Promise<void> {
  await Promise.all([loadBase(lng), adminWanted ? loadAdmin(lng) : undefined]);
}

async function loadBase(lng: Language): Promise<void> {
  if (i18n.hasResourceBundle(lng, 'translation')) return;
  const { translation, antd } = await loaders[lng]();
  if (antd) antdLocales[lng] = antd;
  i18n.addResourceBundle(lng, 'translation', translation, true, true);
}

async function loadAdmin(lng: Language): Promise<void> {
  if (adminLoaded.has(lng)) return;
  const { default: admin } = await adminLoaders[lng]();
  i18n.addResourceBundle(lng, 'translation', admin, true, true);
  adminLoaded.add(lng);
}

/** Loads the admin pages' text in the current language; from then on a language switch loads it too. */
export function loadAdminCatalogue(): Promise<void> {
  adminWanted = true;
  return loadAdmin(i18n.language as Language);
}

function applyLanguage(lng: string): void {
  if (typeof document !== 'undefined') document.documentElement.lang = lng;
}

const initial = detectLanguage();

void i18n.use(initReactI18next).init({
  resources: {},
  lng: initial,
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

/** Resolves when the starting language's catalogue is in: render after it, so no key flashes as text. */
export const i18nReady: Promise<void> = loadLanguage(initial);

/** Switches the UI language (loading its catalogue first) and remembers it. */
export async function changeLanguage(lng: Language): Promise<unknown> {
  await loadLanguage(lng);
  return i18n.changeLanguage(lng);
}

export default i18n;
