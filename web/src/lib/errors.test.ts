import { describe, expect, it } from 'vitest';
import { ApiClient } from '../api/client';
import i18n from '../i18n';
import { apiErrorText, readableMessage } from './errors';

describe('readableMessage', () => {
  it('takes the message out of raw upstream JSON', () => {
    expect(readableMessage('{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}')).toBe(
      'Incorrect API key provided',
    );
    expect(readableMessage('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')).toBe('Overloaded');
    expect(readableMessage('[{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}]')).toBe(
      'Resource exhausted',
    );
    expect(readableMessage('{"detail":"Not Found"}')).toBe('Not Found');
  });

  it('never returns braces', () => {
    expect(readableMessage('{"code":500}')).toBeUndefined();
    expect(readableMessage('{not json')).toBeUndefined();
    expect(readableMessage('plain words')).toBe('plain words');
    expect(readableMessage('')).toBeUndefined();
  });
});

describe('apiErrorText', () => {
  const t = (key: string) => i18n.t(key);
  it('words known codes in the UI language, whatever the server said', async () => {
    await i18n.changeLanguage('zh-CN');
    try {
      expect(apiErrorText('wrong_current_password', 'The current password is wrong.', t, 'x')).toBe('当前密码不正确。');
    } finally {
      await i18n.changeLanguage('en');
    }
    expect(apiErrorText('wrong_current_password', '', t, 'x')).toBe('The current password is wrong.');
  });

  it('falls back to the server message made readable, then to the fallback', () => {
    expect(apiErrorText('upstream_error', '{"error":{"message":"bad key"}}', t, 'fallback')).toBe('bad key');
    expect(apiErrorText('validation_failed', 'Field "name" is invalid: required.', t, 'fallback')).toBe('Field "name" is invalid: required.');
    expect(apiErrorText('http_502', '{}', t, 'fallback')).toBe('fallback');
  });

  it('is what the API client throws', async () => {
    const client = new ApiClient({
      fetch: async () =>
        new Response(JSON.stringify({ error: { code: 'wrong_current_password', message: 'Wrong username or password.' } }), {
          status: 400,
        }),
      translate: (key, vars) => i18n.t(key, vars),
      hasText: (key) => i18n.exists(key),
    });
    await expect(client.post('/api/user/password', {})).rejects.toMatchObject({
      code: 'wrong_current_password',
      message: 'The current password is wrong.',
    });
  });
});
