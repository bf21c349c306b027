import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { afterEach, vi } from 'vitest';
import { loadAdminCatalogue, loadLanguage } from '../i18n';

configure({ asyncUtilTimeout: 10_000 });

// antd's responsive grid and Sider read matchMedia, which jsdom does not have.
Object.defineProperty(window, 'matchMedia', {
  writable: true,
  value: vi.fn().mockImplementation((query: string) => ({
    matches: false,
    media: query,
    onchange: null,
    addListener: vi.fn(),
    removeListener: vi.fn(),
    addEventListener: vi.fn(),
    removeEventListener: vi.fn(),
    dispatchEvent: vi.fn(),
  })),
});

if (!('ResizeObserver' in window)) {
  class ResizeObserverStub {
    observe() {}
    unobserve() {}
    disconnect() {}
  }
  Object.defineProperty(window, 'ResizeObserver', { writable: true, value: ResizeObserverStub });
}

afterEach(() => {
  cleanup();
  localStorage.clear();
});

// Both catalogues (and the admin pages' part) in before any test: tests switch languages with
// i18n.changeLanguage directly and render admin pages without the router that loads their text.
await loadAdminCatalogue();
await Promise.all([loadLanguage('en'), loadLanguage('zh-CN')]);
