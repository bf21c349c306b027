import { act, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Button } from 'antd';
import { describe, expect, it } from 'vitest';
import i18n from '../i18n';
import { renderWithProviders } from '../test/render';
import { ErrorText, useShowError } from './ErrorDetails';

const body = '{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}';

function Thrower() {
  const showError = useShowError();
  return <Button onClick={() => showError(new Error(body))}>go</Button>;
}

describe('ErrorDetails', () => {
  it('keeps the raw text collapsed behind a keyboard-reachable Details summary', async () => {
    const user = userEvent.setup();
    renderWithProviders(<ErrorText message="The upstream service returned an error." detail={body} />);
    const details = screen.getByTestId('error-details') as HTMLDetailsElement;
    expect(details.open).toBe(false);
    await user.tab();
    expect(screen.getByText('Details')).toHaveFocus();
    // Enter and Space on a focused <summary> are the browser's own (jsdom does not act them out): a click.
    await user.click(screen.getByText('Details'));
    expect(details.open).toBe(true);
    expect(screen.getByText(body)).toBeInTheDocument();
  });

  it('toasts the gateway sentence in Chinese, the upstream JSON only behind 详情', async () => {
    await act(() => i18n.changeLanguage('zh-CN'));
    try {
      renderWithProviders(<Thrower />);
      await userEvent.click(screen.getByRole('button'));
      await waitFor(() => expect(screen.getByText('上游服务返回了错误。')).toBeInTheDocument());
      const toast = screen.getByText('上游服务返回了错误。').closest('.tg-error-text') as HTMLElement;
      const summary = screen.getByText('详情');
      expect((summary.closest('details') as HTMLDetailsElement).open).toBe(false);
      // Up front (everything but the collapsed disclosure's body) there is no English and no JSON.
      const upFront = [...toast.childNodes].map((n) => (n instanceof HTMLDetailsElement ? summary.textContent : n.textContent)).join(' ');
      expect(upFront).not.toMatch(/[A-Za-z{}]/);
    } finally {
      await act(() => i18n.changeLanguage('en'));
    }
  });
});
