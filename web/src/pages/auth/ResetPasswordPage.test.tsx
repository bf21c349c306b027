import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../test/render';
import { ResetPasswordPage } from './ResetPasswordPage';

let fetchMock: ReturnType<typeof vi.fn>;

beforeEach(() => {
  fetchMock = vi.fn(async (url: string) => {
    if (url === '/api/status') return new Response(JSON.stringify({ site_name: 'Tollgate', registration_open: true }), { status: 200 });
    if (url === '/api/auth/password/reset') return new Response(null, { status: 204 });
    return new Response('{}', { status: 404 });
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('ResetPasswordPage', () => {
  it('sends the link token with the new password and says the sessions ended', async () => {
    renderWithProviders(<ResetPasswordPage />, { route: '/reset-password?token=tok-123' });
    fireEvent.change(await screen.findByLabelText('New password'), { target: { value: 'quiet-harbor-77' } });
    fireEvent.change(screen.getByLabelText('Confirm password'), { target: { value: 'quiet-harbor-77' } });
    fireEvent.click(screen.getByRole('button', { name: 'Set new password' }));
    expect(await screen.findByTestId('reset-done')).toBeInTheDocument();
    const call = fetchMock.mock.calls.find(([url]) => url === '/api/auth/password/reset');
    expect(JSON.parse(call![1].body)).toEqual({ token: 'tok-123', new_password: 'quiet-harbor-77' });
  });

  it('needs the token from the e-mail', async () => {
    renderWithProviders(<ResetPasswordPage />, { route: '/reset-password' });
    expect(await screen.findByText(/needs the link/)).toBeInTheDocument();
    await waitFor(() => expect(fetchMock.mock.calls.some(([url]) => url === '/api/auth/password/reset')).toBe(false));
  });
});
