import { focusManager, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { ConfigProvider, theme } from 'antd';
import { useEffect, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { BrowserRouter } from 'react-router';
import { ApiError } from './api/client';
import { SessionProvider } from './auth/SessionProvider';
import { antdLocale } from './i18n';
import { AppRoutes } from './router';
import { ThemeModeProvider, useThemeMode } from './theme/ThemeMode';

/** Client errors (4xx) are answers, not glitches: do not retry them. */
function shouldRetry(failureCount: number, error: unknown): boolean {
  if (error instanceof ApiError && error.status >= 400 && error.status < 500) return false;
  return failureCount < 2;
}

/**
 * TanStack Query refetches "on focus" only on visibilitychange; a window that regains focus without being
 * hidden (another window on top, a second monitor) also counts, so balances are fresh when the user looks.
 */
focusManager.setEventListener((handleFocus) => {
  if (typeof window === 'undefined') return undefined;
  const onVisibility = () => handleFocus(document.visibilityState !== 'hidden');
  const onFocus = () => handleFocus(true);
  window.addEventListener('visibilitychange', onVisibility, false);
  window.addEventListener('focus', onFocus, false);
  return () => {
    window.removeEventListener('visibilitychange', onVisibility);
    window.removeEventListener('focus', onFocus);
  };
});

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { retry: shouldRetry, refetchOnWindowFocus: false, staleTime: 10_000 },
      mutations: { retry: false },
    },
  });
}

function ThemedApp({ children }: { children: ReactNode }) {
  const { mode } = useThemeMode();
  const { i18n } = useTranslation();
  useEffect(() => {
    document.documentElement.dataset.theme = mode; // styles.css darkens tag text in the light theme
  }, [mode]);
  return (
    <ConfigProvider
      locale={antdLocale(i18n.language)}
      theme={{
        algorithm: mode === 'dark' ? theme.darkAlgorithm : theme.defaultAlgorithm,
        token: mode === 'dark' ? DARK_CONTRAST : LIGHT_CONTRAST,
      }}
    >
      {children}
    </ConfigProvider>
  );
}

/**
 * antd's defaults put some text under WCAG AA's 4.5:1 (white on #1677ff is 4.0:1, secondary text and
 * placeholders at 45 % and 25 % black): a darker primary and stronger secondary greys keep every text readable
 * (the browser test runs axe-core's color-contrast rule on every page).
 */
const LIGHT_CONTRAST = {
  colorPrimary: '#0958d9',
  colorError: '#cf1322',
  colorLink: '#0958d9',
  colorTextSecondary: 'rgba(0, 0, 0, 0.65)',
  colorTextTertiary: 'rgba(0, 0, 0, 0.62)',
  colorTextDescription: 'rgba(0, 0, 0, 0.62)',
  colorTextPlaceholder: 'rgba(0, 0, 0, 0.6)',
};
const DARK_CONTRAST = {
  colorTextSecondary: 'rgba(255, 255, 255, 0.7)',
  colorTextTertiary: 'rgba(255, 255, 255, 0.65)',
  colorTextDescription: 'rgba(255, 255, 255, 0.65)',
  colorTextPlaceholder: 'rgba(255, 255, 255, 0.6)',
};

/** Providers (query cache, theme, language, session) around the router. */
export function App() {
  const [queryClient] = useState(createQueryClient);
  return (
    <QueryClientProvider client={queryClient}>
      <ThemeModeProvider>
        <ThemedApp>
          <SessionProvider>
            <BrowserRouter>
              <AppRoutes />
            </BrowserRouter>
          </SessionProvider>
        </ThemedApp>
      </ThemeModeProvider>
    </QueryClientProvider>
  );
}
