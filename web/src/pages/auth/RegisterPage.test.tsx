import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '../../test/render';
import { RegisterPage } from './RegisterPage';

function status(open: boolean) {
  return { version: 'test', registration_open: open, store: 'sqlite', cache: 'memory', site_name: 'Tollgate', notice: '' };
}

let fetchMock: ReturnType<typeof vi.fn>;

beforeEach(() => {
  fetchMock = vi.fn(async (url: string) => {
    if (url === '/api/status') return new Response(JSON.stringify(status(true)), { status: 200 });
    return new Response(JSON.stringify({ error: { code: 'username_taken', message: 'That name is taken', field: 'username' } }), {
      status: 409,
    });
  });
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => {
  vi.unstubAllGlobals();
});

const registerCalls = () => fetchMock.mock.calls.filter(([url]) => url === '/api/auth/register');

describe('RegisterPage', () => {
  it('validates before sending anything', async () => {
    renderWithProviders(<RegisterPage />);
    const submit = await screen.findByRole('button', { name: /sign up/i });
    fireEvent.change(screen.getByLabelText('Username'), { target: { value: 'a!' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'short' } });
    fireEvent.change(screen.getByLabelText('Confirm password'), { target: { value: 'different' } });
    fireEvent.click(submit);
    expect(await screen.findByText(/3–32 letters/)).toBeInTheDocument();
    expect(await screen.findByText('At least 8 characters')).toBeInTheDocument();
    expect(await screen.findByText('The two passwords do not match')).toBeInTheDocument();
    expect(registerCalls()).toHaveLength(0);
  });

  it('shows the server error under the field it names', async () => {
    renderWithProviders(<RegisterPage />);
    const submit = await screen.findByRole('button', { name: /sign up/i });
    fireEvent.change(screen.getByLabelText('Username'), { target: { value: 'alice' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'correct-horse' } });
    fireEvent.change(screen.getByLabelText('Confirm password'), { target: { value: 'correct-horse' } });
    fireEvent.click(submit);
    expect(await screen.findByText('That name is taken')).toBeInTheDocument();
    expect(registerCalls()).toHaveLength(1);
    expect(JSON.parse(registerCalls()[0][1].body)).toEqual({ username: 'alice', password: 'correct-horse', language: 'en' });
  });

  it('shows a refused weak password under the password field', async () => {
    const weak = { code: 'weak_password', message: 'This password is one of the most commonly used passwords; choose another.', field: 'password' };
    fetchMock.mockImplementation(async (url: string) =>
      url === '/api/status'
        ? new Response(JSON.stringify(status(true)), { status: 200 })
        : new Response(JSON.stringify({ error: weak }), { status: 400 }),
    );
    renderWithProviders(<RegisterPage />);
    const submit = await screen.findByRole('button', { name: /sign up/i });
    fireEvent.change(screen.getByLabelText('Username'), { target: { value: 'alice' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'password1' } });
    fireEvent.change(screen.getByLabelText('Confirm password'), { target: { value: 'password1' } });
    fireEvent.click(submit);
    expect(await screen.findByText(weak.message)).toBeInTheDocument();
  });

  it('says so when registration is closed', async () => {
    fetchMock.mockImplementation(async () => new Response(JSON.stringify(status(false)), { status: 200 }));
    renderWithProviders(<RegisterPage />);
    expect(await screen.findByText('Registration is closed')).toBeInTheDocument();
    await waitFor(() => expect(screen.queryByRole('button', { name: /sign up/i })).not.toBeInTheDocument());
  });

  it('sends the invite code of an invite link', async () => {
    renderWithProviders(<RegisterPage />, { route: '/register?aff=Inv1te' });
    expect(await screen.findByTestId('invited-by')).toHaveTextContent('Inv1te');
    fireEvent.change(screen.getByLabelText('Username'), { target: { value: 'bob' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'correct-horse' } });
    fireEvent.change(screen.getByLabelText('Confirm password'), { target: { value: 'correct-horse' } });
    fireEvent.click(screen.getByRole('button', { name: /sign up/i }));
    await waitFor(() => expect(registerCalls()).toHaveLength(1));
    expect(JSON.parse(registerCalls()[0][1].body)).toEqual({ username: 'bob', password: 'correct-horse', language: 'en', aff_code: 'Inv1te' });
  });

  it('asks for the e-mailed code when the site verifies e-mail, then signs in', async () => {
    const calls: { url: string; body: unknown }[] = [];
    fetchMock.mockImplementation(async (url: string, init?: RequestInit) => {
      calls.push({ url, body: init?.body ? JSON.parse(String(init.body)) : undefined });
      if (url === '/api/status') return new Response(JSON.stringify({ ...status(true), email_verification: true }), { status: 200 });
      if (url === '/api/auth/register')
        return new Response(JSON.stringify({ user: { id: 5, username: 'carol', email: 'carol@example.com', status: 'unverified' } }), { status: 201 });
      if (url === '/api/auth/email/verify')
        return new Response(JSON.stringify({ user: { id: 5, username: 'carol', status: 'enabled' } }), { status: 200 });
      return new Response(JSON.stringify({ error: { code: 'invalid_credentials', message: 'no' } }), { status: 401 });
    });
    renderWithProviders(<RegisterPage />);
    const submit = await screen.findByRole('button', { name: /sign up/i });
    fireEvent.change(screen.getByLabelText('Username'), { target: { value: 'carol' } });
    fireEvent.change(screen.getByLabelText(/E-mail \(a code is sent/), { target: { value: 'carol@example.com' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'correct-horse' } });
    fireEvent.change(screen.getByLabelText('Confirm password'), { target: { value: 'correct-horse' } });
    fireEvent.click(submit);
    expect(await screen.findByTestId('verify-hint')).toHaveTextContent('carol@example.com');
    fireEvent.change(screen.getByTestId('verify-code'), { target: { value: '123456' } });
    fireEvent.click(screen.getByRole('button', { name: 'Verify' }));
    await waitFor(() => expect(calls.some((c) => c.url === '/api/auth/login')).toBe(true));
    expect(calls.find((c) => c.url === '/api/auth/email/verify')?.body).toEqual({ email: 'carol@example.com', code: '123456' });
  });
});
