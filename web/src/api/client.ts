import { apiErrorText } from '../lib/errorText';
import type { LoginResponse } from './types';

/** An error answered by the API (or the network), with the server's localized message. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly field?: string;
  /** With `totp_required` after a right password: the ticket `POST /api/auth/login/totp` completes. */
  readonly ticket?: string;
  /** The server's own text when it is not what `message` shows (raw upstream JSON, or replaced by the catalogue). */
  readonly detail?: string;

  constructor(status: number, code: string, message: string, field?: string, ticket?: string, detail?: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.field = field;
    this.ticket = ticket;
    this.detail = detail;
  }
}

export type QueryValue = string | number | boolean | null | undefined;

export interface RequestOptions {
  query?: Record<string, QueryValue>;
  body?: unknown;
  /** Set false for calls that must not trigger the refresh-and-retry (login, register). */
  retryOn401?: boolean;
  /** Extra request headers (e.g. X-Tollgate-TOTP for a step-up). */
  headers?: Record<string, string>;
}

export interface ApiClientOptions {
  baseUrl?: string;
  fetch?: typeof fetch;
  /** The UI language sent as Accept-Language so server messages come back localized. */
  getLanguage?: () => string;
  /** Text for failures that carry no server message (network down, non-JSON 5xx). */
  translate?: (key: string, vars?: Record<string, unknown>) => string;
  /** Whether the catalogue has a text for key: API error codes with one (`apiErrors.<code>`) are worded by it. */
  hasText?: (key: string) => boolean;
}

type SessionListener = (session: LoginResponse | null) => void;

const REFRESH_PATH = '/api/auth/refresh';

/** The console error code of a failed answer, or undefined when its body is not one. */
async function errorCode(res: Response): Promise<string | undefined> {
  try {
    const body = (await res.clone().json()) as { error?: { code?: string } };
    return body.error?.code;
  } catch {
    return undefined;
  }
}

/**
 * The console's fetch client: adds the Bearer JWT, refreshes it once on a 401 through the
 * httpOnly refresh cookie, and turns error bodies into ApiError with the localized message.
 */
export class ApiClient {
  private token: string | null = null;
  private refreshing: Promise<LoginResponse | null> | null = null;
  private readonly listeners = new Set<SessionListener>();
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly getLanguage: () => string;
  private readonly translate: (key: string, vars?: Record<string, unknown>) => string;
  private readonly hasText: (key: string) => boolean;

  constructor(options: ApiClientOptions = {}) {
    this.baseUrl = options.baseUrl ?? '';
    this.fetchImpl = options.fetch ?? ((...args) => globalThis.fetch(...args));
    this.getLanguage = options.getLanguage ?? (() => 'en');
    this.translate = options.translate ?? ((key) => key);
    this.hasText = options.hasText ?? (() => false);
  }

  /** The current access token, or null when signed out. */
  getToken(): string | null {
    return this.token;
  }

  /** Installs (or clears) the session and tells subscribers. */
  setSession(session: LoginResponse | null): void {
    this.token = session?.token ?? null;
    for (const listener of this.listeners) listener(session);
  }

  /** Subscribes to session changes (login, refresh, expiry); returns the unsubscribe function. */
  onSession(listener: SessionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Trades the refresh cookie for a new access token. Concurrent callers share one request. */
  refresh(): Promise<LoginResponse | null> {
    if (!this.refreshing) {
      this.refreshing = this.doRefresh().finally(() => {
        this.refreshing = null;
      });
    }
    return this.refreshing;
  }

  private async doRefresh(): Promise<LoginResponse | null> {
    try {
      let res = await this.send('POST', REFRESH_PATH, {});
      if (res.status === 401 && (await errorCode(res)) === 'refresh_rotated') {
        // Another tab renewed the session a moment ago; the cookie jar now holds the successor.
        await new Promise((resolve) => setTimeout(resolve, 150));
        res = await this.send('POST', REFRESH_PATH, {});
      }
      if (!res.ok) {
        this.setSession(null);
        return null;
      }
      const session = (await res.json()) as LoginResponse;
      this.setSession(session);
      return session;
    } catch {
      this.setSession(null);
      return null;
    }
  }

  get<T>(path: string, query?: Record<string, QueryValue>): Promise<T> {
    return this.request<T>('GET', path, { query });
  }

  post<T>(path: string, body?: unknown, options: Omit<RequestOptions, 'body'> = {}): Promise<T> {
    return this.request<T>('POST', path, { ...options, body });
  }

  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, { body });
  }

  put<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PUT', path, { body });
  }

  del<T = void>(path: string): Promise<T> {
    return this.request<T>('DELETE', path, {});
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return this.parse<T>(await this.exchange(method, path, options));
  }

  /** GETs a file (e.g. a CSV export) with the session: its bytes and the server's file name. */
  async download(path: string, query?: Record<string, QueryValue>): Promise<{ blob: Blob; filename: string | null }> {
    const res = await this.exchange('GET', path, { query });
    if (!res.ok) await this.parse<never>(res);
    const disposition = res.headers.get('Content-Disposition') ?? '';
    const match = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition);
    return { blob: await res.blob(), filename: match ? decodeURIComponent(match[1]) : null };
  }

  /** Sends once, and once more after a refresh when the access token expired. */
  private async exchange(method: string, path: string, options: RequestOptions): Promise<Response> {
    try {
      let res = await this.send(method, path, options);
      if (res.status === 401 && options.retryOn401 !== false && path !== REFRESH_PATH) {
        const session = await this.refresh();
        if (session) res = await this.send(method, path, options);
      }
      return res;
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw new ApiError(0, 'network_error', this.translate('errors.network'));
    }
  }

  private send(method: string, path: string, options: RequestOptions): Promise<Response> {
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'Accept-Language': this.getLanguage(),
    };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (options.headers) Object.assign(headers, options.headers);
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    return this.fetchImpl(this.baseUrl + path + buildQuery(options.query), {
      method,
      headers,
      body,
      credentials: 'same-origin',
    });
  }

  private async parse<T>(res: Response): Promise<T> {
    const text = res.status === 204 ? '' : await res.text();
    let data: unknown = undefined;
    if (text) {
      try {
        data = JSON.parse(text);
      } catch {
        data = undefined;
      }
    }
    if (res.ok) return data as T;
    const body = data as { error?: { code?: string; message?: string; field?: string }; ticket?: string } | undefined;
    const error = body?.error;
    const code = error?.code ?? `http_${res.status}`;
    const shown = apiErrorText(code, error?.message, (key) => (this.hasText(key) ? this.translate(key) : key), this.translate('errors.http', { status: res.status }));
    const raw = (error?.message ?? (data === undefined ? text : '')).trim();
    throw new ApiError(
      res.status,
      code,
      shown,
      error?.field,
      typeof body?.ticket === 'string' ? body.ticket : undefined,
      raw && raw !== shown ? raw : undefined,
    );
  }
}

/** Builds `?a=1&b=x` from defined, non-empty values. */
export function buildQuery(query?: Record<string, QueryValue>): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}
