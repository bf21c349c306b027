/**
 * The playground's conversation with the gateway: the request body, a reader of OpenAI chat-completion SSE
 * (text deltas, usage, in-stream errors) and "copy as code".
 */

export interface ChatImage {
  /** A data: URL. */
  url: string;
  name: string;
}

export interface ChatTurn {
  role: 'user' | 'assistant';
  content: string;
  images?: ChatImage[];
}

export interface ChatParams {
  model: string;
  system: string;
  temperature: number | null;
  maxTokens: number | null;
}

type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** The /v1/chat/completions body for the conversation: system first, images as image_url parts. */
export function chatBody(params: ChatParams, turns: readonly ChatTurn[], stream = true): Record<string, unknown> {
  const messages: { role: string; content: string | ContentPart[] }[] = [];
  if (params.system.trim()) messages.push({ role: 'system', content: params.system });
  for (const turn of turns) {
    if (turn.images?.length) {
      const parts: ContentPart[] = [{ type: 'text', text: turn.content }];
      for (const img of turn.images) parts.push({ type: 'image_url', image_url: { url: img.url } });
      messages.push({ role: turn.role, content: parts });
    } else {
      messages.push({ role: turn.role, content: turn.content });
    }
  }
  const body: Record<string, unknown> = { model: params.model, messages };
  if (params.temperature !== null) body.temperature = params.temperature;
  if (params.maxTokens !== null) body.max_tokens = params.maxTokens;
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

export interface StreamUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** What one SSE event of a chat stream adds. */
export interface ChatEvent {
  text?: string;
  usage?: StreamUsage;
  error?: string;
  done?: boolean;
}

/** Parses one `data:` payload of an OpenAI chat stream. */
export function parseChatEvent(data: string): ChatEvent {
  if (data.trim() === '[DONE]') return { done: true };
  let obj: {
    choices?: { delta?: { content?: string | null } }[];
    usage?: StreamUsage | null;
    error?: { message?: string } | string;
  };
  try {
    obj = JSON.parse(data);
  } catch {
    return {};
  }
  const out: ChatEvent = {};
  const text = (obj.choices ?? []).map((c) => c.delta?.content ?? '').join('');
  if (text) out.text = text;
  if (obj.usage) out.usage = { prompt_tokens: obj.usage.prompt_tokens ?? 0, completion_tokens: obj.usage.completion_tokens ?? 0 };
  if (obj.error) out.error = typeof obj.error === 'string' ? obj.error : (obj.error.message ?? 'error');
  return out;
}

/**
 * Splits an SSE byte stream into `data:` payloads as they arrive (events end with a blank line; CRLF
 * tolerated). Feed text chunks; each call answers the payloads completed so far.
 */
export class SSEReader {
  private buf = '';

  push(chunk: string): string[] {
    this.buf += chunk.replace(/\r\n/g, '\n');
    const out: string[] = [];
    let at: number;
    while ((at = this.buf.indexOf('\n\n')) >= 0) {
      const event = this.buf.slice(0, at);
      this.buf = this.buf.slice(at + 2);
      const data = event
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data) out.push(data);
    }
    return out;
  }
}

/** A curl command that sends the same request (images included), for "copy as code". */
export function asCurl(baseUrl: string, key: string, body: Record<string, unknown>): string {
  const json = JSON.stringify(body, null, 2).replace(/'/g, `'\\''`);
  return [
    `curl ${baseUrl}/v1/chat/completions \\`,
    `  -H "Authorization: Bearer ${key}" \\`,
    '  -H "Content-Type: application/json" \\',
    `  -d '${json}'`,
  ].join('\n');
}
