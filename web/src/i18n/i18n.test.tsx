import { act, render, screen } from '@testing-library/react';
import { useTranslation } from 'react-i18next';
import { afterEach, describe, expect, it, vi } from 'vitest';
import i18n, { changeLanguage, detectLanguage, LANGUAGE_STORAGE_KEY } from './index';
import enBase from './en';
import enAdmin from './en-admin';
import zhCNBase from './zh-CN';
import zhCNAdmin from './zh-CN-admin';
import { LanguageSwitch } from '../components/LanguageSwitch';

type Tree = { [key: string]: string | Tree };

// The admin pages' text is its own chunk; together with the rest it is the whole catalogue.
const en = { ...enBase, ...enAdmin };
const zhCN = { ...zhCNBase, ...zhCNAdmin };

function flatten(tree: Tree, prefix = ''): string[] {
  return Object.entries(tree).flatMap(([k, v]) => (typeof v === 'string' ? [prefix + k] : flatten(v, `${prefix}${k}.`)));
}

/** Keys without i18next plural suffixes, which differ between English and Chinese. */
function baseKeys(tree: Tree): Set<string> {
  return new Set(flatten(tree).map((k) => k.replace(/_(zero|one|two|few|many|other)$/, '')));
}

/** Every source file's text (tests excluded), through Vite's glob import. */
const sources = import.meta.glob<string>(['../**/*.{ts,tsx}', '!../**/*.test.{ts,tsx}'], {
  query: '?raw',
  import: 'default',
  eager: true,
});

function Greeting() {
  const { t } = useTranslation();
  return <h1>{t('auth.signIn')}</h1>;
}

afterEach(async () => {
  await act(() => changeLanguage('en'));
});

describe('i18n', () => {
  it('has the same keys in English and Chinese', () => {
    expect([...baseKeys(zhCN)].sort()).toEqual([...baseKeys(en)].sort());
  });

  it('has a Chinese text for every Chinese key, never a raw key or code', () => {
    const flat = (tree: Tree, prefix = ''): [string, string][] =>
      Object.entries(tree).flatMap(([k, v]) => (typeof v === 'string' ? [[prefix + k, v]] : flat(v, `${prefix}${k}.`)));
    const enKeys = new Set(flatten(en));
    const zh = flat(zhCN as unknown as Tree);
    const keyLike = new Set([...enKeys].flatMap((k) => [k, k.split('.').pop() ?? k]));
    // Every zh-CN key is a catalogue key (the same keys as English, plural suffixes aside).
    expect(zh.map(([k]) => k.replace(/_(zero|one|two|few|many|other)$/, '')).filter((k) => !baseKeys(en).has(k))).toEqual([]);
    // No value is a key path or a bare snake_case code: what t() shows for a missing key, or an untranslated code.
    const raw = zh.filter(([, v]) => keyLike.has(v) || /^[a-z0-9]+(_[a-z0-9]+)+$/.test(v));
    expect(raw).toEqual([]);
    expect(zh.filter(([, v]) => v.trim() === '')).toEqual([]);
  });

  it('defines every static key the code uses', () => {
    const known = baseKeys(en);
    const used = new Set<string>();
    for (const text of Object.values(sources)) {
      for (const m of text.matchAll(/\bt\(\s*'([a-zA-Z]+\.[a-zA-Z0-9_.-]+)'/g)) used.add(m[1]);
    }
    expect(used.size).toBeGreaterThan(100);
    expect([...used].filter((key) => !known.has(key))).toEqual([]);
  });

  it('switches the rendered text and remembers the choice', async () => {
    render(<Greeting />);
    expect(screen.getByRole('heading')).toHaveTextContent('Sign in');
    await act(() => changeLanguage('zh-CN'));
    expect(screen.getByRole('heading')).toHaveTextContent('登录');
    expect(localStorage.getItem(LANGUAGE_STORAGE_KEY)).toBe('zh-CN');
    expect(document.documentElement.lang).toBe('zh-CN');
    expect(i18n.language).toBe('zh-CN');
  });

  it('takes the first choice from the browser, then from storage', () => {
    const languages = vi.spyOn(window.navigator, 'languages', 'get').mockReturnValue(['zh-TW', 'en-US']);
    expect(detectLanguage()).toBe('zh-CN');
    languages.mockReturnValue(['fr-FR', 'en-GB']);
    expect(detectLanguage()).toBe('en');
    localStorage.setItem(LANGUAGE_STORAGE_KEY, 'zh-CN');
    expect(detectLanguage()).toBe('zh-CN');
    languages.mockRestore();
  });

  it('offers both languages in the header switch', () => {
    render(<LanguageSwitch />);
    expect(screen.getByTestId('language-switch')).toBeInTheDocument();
    expect(screen.getByText('English')).toBeInTheDocument();
  });
});
