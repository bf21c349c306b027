import { useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { selfKey } from '../../api/auth';
import { api } from '../../api/http';
import { relayFetch } from '../../api/relay';
import type { LogPage, UsageLog } from '../../api/types';
import { chatBody, parseChatEvent, SSEReader, type ChatParams, type ChatTurn, type StreamUsage } from './chat';

/** One answer and what it cost, from its own log row once the gateway has written it. */
export interface Answer {
  text: string;
  error?: string;
  /** The raw error body when `error` is the message taken out of it (shown behind "Details"). */
  errorDetail?: string;
  requestId?: string;
  /** Usage the stream reported (shown until the log row arrives). */
  usage?: StreamUsage;
  /** Milliseconds until the stream ended, measured in the browser. */
  clientMs?: number;
  log?: UsageLog;
  body: Record<string, unknown>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The log row of a request id: the writer batches rows, so it is polled for a few seconds. */
async function findLog(requestId: string): Promise<UsageLog | undefined> {
  for (let i = 0; i < 40; i++) {
    const page = await api.get<LogPage>('/api/logs', { request_id: requestId, limit: 1 });
    if (page.items?.[0]) return page.items[0];
    await sleep(i < 10 ? 250 : 500);
  }
  return undefined;
}

/**
 * The playground's conversation: sends it to /v1/chat/completions with the picked key, streams the answer in,
 * then reads the answer's log row (tokens, cost, latency as billed) and refreshes the balance and logs.
 */
export function useChat() {
  const qc = useQueryClient();
  const [turns, setTurns] = useState<ChatTurn[]>([]);
  const [answers, setAnswers] = useState<Record<number, Answer>>({});
  const [busy, setBusy] = useState(false);
  const abort = useRef<AbortController | null>(null);

  const patch = (index: number, p: Partial<Answer>) => setAnswers((a) => ({ ...a, [index]: { ...a[index], ...p } }));

  async function send(key: string, params: ChatParams, user: ChatTurn) {
    const history = [...turns, user];
    const index = history.length; // the assistant turn's index
    const body = chatBody(params, history);
    setTurns([...history, { role: 'assistant', content: '' }]);
    setAnswers((a) => ({ ...a, [index]: { text: '', body } }));
    setBusy(true);
    const ctrl = new AbortController();
    abort.current = ctrl;
    const started = performance.now();
    let text = '';
    let requestId: string | undefined;
    try {
      const res = await relayFetch('/v1/chat/completions', key, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
        signal: ctrl.signal,
      });
      requestId = res.headers.get('X-Tollgate-Request-Id') ?? undefined;
      patch(index, { requestId });
      if (!res.ok || !res.body) {
        const err = await res.text();
        let message = err;
        try {
          message = (JSON.parse(err) as { error?: { message?: string } }).error?.message ?? err;
        } catch {
          // not JSON: the text as it came
        }
        patch(index, { error: message || String(res.status), errorDetail: message !== err ? err : undefined });
      } else {
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        const sse = new SSEReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          for (const data of sse.push(value)) {
            const ev = parseChatEvent(data);
            if (ev.text) {
              text += ev.text;
              const now = text;
              setTurns((ts) => ts.map((t, i) => (i === index ? { ...t, content: now } : t)));
              patch(index, { text: now });
            }
            if (ev.usage) patch(index, { usage: ev.usage });
            if (ev.error) patch(index, { error: ev.error });
          }
        }
      }
    } catch (err) {
      patch(index, { error: (err as Error).message });
    } finally {
      patch(index, { clientMs: Math.round(performance.now() - started) });
      setBusy(false);
      abort.current = null;
    }
    if (requestId) {
      const log = await findLog(requestId).catch(() => undefined);
      if (log) patch(index, { log });
    }
    // The call changed the balance and the logs: show it everywhere without a reload.
    void qc.invalidateQueries({ queryKey: selfKey });
    void qc.invalidateQueries({ queryKey: ['logs'] });
    void qc.invalidateQueries({ queryKey: ['log-stats'] });
  }

  return {
    turns,
    answers,
    busy,
    send,
    stop: () => abort.current?.abort(),
    clear: () => {
      setTurns([]);
      setAnswers({});
    },
  };
}
