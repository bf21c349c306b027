import { describe, expect, it } from 'vitest';
import { ApiClient } from '../api/client';
import i18n from '../i18n';
import { ApiError } from '../api/client';
import { apiErrorText, errorParts, readableMessage, upstreamParts } from './errors';

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

  it("falls back to the server's sentence, then to the fallback; an upstream body gives the gateway's sentence", () => {
    expect(apiErrorText('upstream_error', '{"error":{"message":"bad key"}}', t, 'fallback')).toBe('The upstream service returned an error.');
    expect(apiErrorText('validation_failed', 'Field "name" is invalid: required.', t, 'fallback')).toBe('Field "name" is invalid: required.');
    expect(apiErrorText('http_502', '', t, 'fallback')).toBe('fallback');
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

describe('errorParts', () => {
  const t = ((key: string) => i18n.t(key)) as Parameters<typeof errorParts>[1];
  const upstreamBody = '{"error":{"message":"Incorrect API key provided: sk-abc","type":"invalid_request_error"}}';
  const client = (status: number, body: unknown) =>
    new ApiClient({
      fetch: async () => new Response(JSON.stringify(body), { status }),
      translate: (key, vars) => i18n.t(key, vars),
      hasText: (key) => i18n.exists(key),
    });

  it('shows the gateway sentence in Chinese and keeps the upstream body as the detail', async () => {
    await i18n.changeLanguage('zh-CN');
    try {
      const err = await client(502, { error: { code: 'upstream_error', message: upstreamBody } })
        .post('/api/x', {})
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      const parts = errorParts(err, t);
      expect(parts.message).toBe('上游服务返回了错误。');
      expect(parts.message).not.toMatch(/[{}]|Incorrect|API key/);
      expect(parts.detail).toBe(upstreamBody);
    } finally {
      await i18n.changeLanguage('en');
    }
  });

  it("puts the server's text behind the detail when the catalogue words the code", async () => {
    const err = await client(400, { error: { code: 'wrong_current_password', message: 'Wrong username or password.' } })
      .post('/api/user/password', {})
      .catch((e: unknown) => e);
    expect(errorParts(err, t)).toEqual({ message: 'The current password is wrong.', detail: 'Wrong username or password.' });
  });

  it('has no detail when the server sentence is what is shown', async () => {
    const err = await client(400, { error: { code: 'validation_failed', message: 'Name is required.' } })
      .post('/api/x', {})
      .catch((e: unknown) => e);
    expect(errorParts(err, t)).toEqual({ message: 'Name is required.', detail: undefined });
  });

  it('never shows upstream JSON up front for a plain error', () => {
    expect(errorParts(new Error(upstreamBody), t)).toEqual({ message: 'The upstream service returned an error.', detail: upstreamBody });
    expect(errorParts(new Error('socket hang up'), t)).toEqual({ message: 'socket hang up' });
    expect(errorParts('x', t)).toEqual({ message: 'Something went wrong.' });
    expect(upstreamParts('', 'summary', 'fallback')).toEqual({ message: 'fallback' });
  });
});
