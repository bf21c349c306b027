import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import { App as AntdApp } from 'antd';
import type { ReactElement } from 'react';
import { MemoryRouter } from 'react-router';
import '../i18n';

/** Renders UI with the providers the pages expect: query cache, antd App, router. */
export function renderWithProviders(ui: ReactElement, { route = '/' }: { route?: string } = {}) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <AntdApp>
        <MemoryRouter initialEntries={[route]}>{ui}</MemoryRouter>
      </AntdApp>
    </QueryClientProvider>,
  );
}
