import { describe, expect, it } from 'vitest';
import { asCurl, chatBody, parseChatEvent, SSEReader } from './chat';

describe('playground chat', () => {
  it('builds the body: system first, images as parts, stream with usage', () => {
    const body = chatBody({ model: 'gpt-4o', system: 'Be brief.', temperature: 0.2, maxTokens: 64 }, [
      { role: 'user', content: 'What is this?', images: [{ url: 'data:image/png;base64,AAAA', name: 'a.png' }] },
    ]);
    expect(body).toEqual({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
      ],
      temperature: 0.2,
      max_tokens: 64,
      stream: true,
      stream_options: { include_usage: true },
    });
    const plain = chatBody({ model: 'm', system: ' ', temperature: null, maxTokens: null }, [{ role: 'user', content: 'hi' }], false);
    expect(plain).toEqual({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('reads SSE events split anywhere, CRLF included', () => {
    const r = new SSEReader();
    expect(r.push('data: {"a"')).toEqual([]);
    expect(r.push(':1}\r\n\r\ndata: [DONE]\n')).toEqual(['{"a":1}']);
    expect(r.push('\n')).toEqual(['[DONE]']);
    expect(r.push(': comment\n\n')).toEqual([]);
  });

  it('parses deltas, usage, errors and the end', () => {
    expect(parseChatEvent('{"choices":[{"delta":{"content":"Hel"}}]}')).toEqual({ text: 'Hel' });
    expect(parseChatEvent('{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":20}}')).toEqual({
      usage: { prompt_tokens: 10, completion_tokens: 20 },
    });
    expect(parseChatEvent('{"error":{"message":"boom"}}')).toEqual({ error: 'boom' });
    expect(parseChatEvent('[DONE]')).toEqual({ done: true });
    expect(parseChatEvent('not json')).toEqual({});
  });

  it('copies as a curl command with the key and shell-safe quotes', () => {
    const curl = asCurl('http://h', 'sk-1', { model: "it's" });
    expect(curl).toContain('curl http://h/v1/chat/completions');
    expect(curl).toContain('Bearer sk-1');
    expect(curl).toContain(`"model": "it'\\''s"`);
  });
});
