/**
 * A sentence a person can read from an error text that may be a raw upstream body: JSON such as
 * `{"error":{"message":"…","type":"…"}}` gives its message (OpenAI, Anthropic and Gemini all nest it under
 * `error.message`; some send `message` or a bare `error` string); anything else that looks like JSON gives
 * undefined, so the caller shows its own text instead of braces.
 */
export function readableMessage(text: string | null | undefined): string | undefined {
  const s = (text ?? '').trim();
  if (!s) return undefined;
  if (!s.startsWith('{') && !s.startsWith('[')) return s;
  let data: unknown;
  try {
    data = JSON.parse(s);
  } catch {
    return undefined;
  }
  return pick(Array.isArray(data) ? data[0] : data, 0);
}

function pick(v: unknown, depth: number): string | undefined {
  if (depth > 3 || v === null || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  for (const k of ['message', 'error', 'detail', 'msg']) {
    const x = o[k];
    if (typeof x === 'string' && x.trim()) return x.trim();
    const nested = pick(x, depth + 1);
    if (nested) return nested;
  }
  return undefined;
}

/**
 * The message of a console API error: the catalogue's `apiErrors.<code>` when the console has its own text for
 * the code (so the UI's language wins, whatever language the server answered in), else the server's own
 * (localized) sentence, else the fallback. A server message that is an upstream body (JSON) is not the
 * gateway's sentence: it gives `errors.upstream`, and the body goes behind the "Details" disclosure
 * (`ApiError.detail`, `ErrorDetails`).
 */
export function apiErrorText(
  code: string,
  serverMessage: string | undefined,
  translate: (key: string, vars?: Record<string, unknown>) => string,
  fallback: string,
): string {
  const key = `apiErrors.${code}`;
  const mapped = translate(key);
  if (mapped && mapped !== key) return mapped;
  const text = (serverMessage ?? '').trim();
  if (text.startsWith('{') || text.startsWith('[')) {
    const upstream = translate('errors.upstream');
    return upstream && upstream !== 'errors.upstream' ? upstream : fallback;
  }
  return text || fallback;
}
