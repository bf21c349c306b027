// A tiny OpenAI-shaped upstream for the browser tests: every chat call reports
// usage {prompt_tokens: 10, completion_tokens: 20}, so the cost is known to the unit.
import { createServer } from 'node:http';

export const FAKE_MODELS = ['gpt-4o-mini', 'gpt-4o'];

function readBody(req) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(text ? JSON.parse(text) : {});
      } catch {
        resolve({});
      }
    });
  });
}

function completion(model) {
  return {
    id: `chatcmpl-fake-${Date.now()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the fake upstream.' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
  };
}

function stream(res, model) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  const base = { id: `chatcmpl-fake-${Date.now()}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
  const send = (obj) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
  send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello' }, finish_reason: null }] });
  send({ ...base, choices: [{ index: 0, delta: { content: ' there.' }, finish_reason: 'stop' }] });
  send({ ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 } });
  res.end('data: [DONE]\n\n');
}

/** Starts the fake upstream on 127.0.0.1; answers { url, requests, close }. */
export async function startFakeUpstream() {
  const requests = [];
  const server = createServer(async (req, res) => {
    const path = (req.url ?? '').split('?')[0].replace(/^\/v1(?=\/)/, '');
    const body = req.method === 'POST' ? await readBody(req) : {};
    requests.push({ method: req.method, path, body, auth: req.headers.authorization ?? '' });
    if (req.method === 'GET' && path === '/models') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: FAKE_MODELS.map((id) => ({ id, object: 'model', owned_by: 'fake' })) }));
      return;
    }
    if (req.method === 'POST' && path === '/chat/completions') {
      const model = body.model ?? 'gpt-4o-mini';
      if (body.stream) return stream(res, model);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(completion(model)));
      return;
    }
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `fake upstream has no ${req.method} ${path}`, type: 'invalid_request_error' } }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
