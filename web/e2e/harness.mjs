// Shared set-up for the console browser tests: the real Tollgate binary on SQLite + memory, a fake
// upstream, Debian's Chromium driven by playwright-core, and failure screenshots.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const WEB_DIR = resolve(here, '..');
export const ARTIFACTS = join(here, 'artifacts');
export const ROOT_PASSWORD = 'e2e-root-Passw0rd!';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Empties e2e/artifacts so it holds only this run's failures and server log. */
export function resetArtifacts() {
  rmSync(ARTIFACTS, { recursive: true, force: true });
  mkdirSync(ARTIFACTS, { recursive: true });
}

export function freePort() {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolvePort(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls fn until it answers truthy or the deadline passes. */
export async function eventually(fn, { timeout = 15_000, interval = 250, what = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  let lastError;
  while (Date.now() < deadline) {
    try {
      const value = await fn();
      if (value) return value;
    } catch (err) {
      lastError = err;
    }
    await sleep(interval);
  }
  throw new Error(`timed out waiting for ${what}${lastError ? `: ${lastError.message}` : ''}`);
}

/**
 * Starts the Tollgate binary from TOLLGATE_BIN (default ../tollgate) on a free port with a fresh SQLite file;
 * its output goes to e2e/artifacts/<log>.
 */
export async function startTollgate({ log: logName = 'tollgate.log' } = {}) {
  const bin = resolve(WEB_DIR, process.env.TOLLGATE_BIN ?? '../tollgate');
  if (!existsSync(bin)) throw new Error(`Tollgate binary not found at ${bin}; build it (make build) or set TOLLGATE_BIN`);
  mkdirSync(ARTIFACTS, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-e2e-'));
  const port = await freePort();
  const env = { ...process.env };
  for (const name of ['SQL_DSN', 'REDIS_URL', 'TOLLGATE_BIN']) delete env[name];
  Object.assign(env, {
    PORT: String(port),
    SQLITE_PATH: join(dir, 't.db'),
    ROOT_PASSWORD,
    SECRET_KEY: 'e2e-secret-key-0123456789abcdefghijklmnop',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  });
  const log = createWriteStream(join(ARTIFACTS, logName));
  const child = spawn(bin, [], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  let exited = null;
  // Never leave the server behind, even when this process dies before the after() hooks run.
  const killChild = () => {
    if (!exited) child.kill('SIGKILL');
  };
  process.once('exit', killChild);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      killChild();
      process.exit(1);
    });
  }
  child.on('exit', (code, signal) => {
    exited = { code, signal };
  });
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    async () => {
      if (exited) throw new Error(`tollgate exited early (${JSON.stringify(exited)}); see e2e/artifacts/${logName}`);
      const res = await fetch(`${url}/readyz`);
      return res.status === 200;
    },
    { timeout: 30_000, what: 'GET /readyz' },
  );
  return {
    url,
    async stop() {
      if (!exited) {
        child.kill('SIGTERM');
        await eventually(() => exited, { timeout: 10_000, what: 'tollgate to exit' }).catch(() => child.kill('SIGKILL'));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A small JSON client for the console API as some user (root by default). */
export async function apiAs(baseUrl, username = 'root', password = ROOT_PASSWORD) {
  const login = await fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  if (login.status !== 200) throw new Error(`login as ${username}: ${login.status} ${await login.text()}`);
  const { token } = await login.json();
  return async function call(method, path, body) {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
}

/** Launches Chromium with a fresh user-data-dir; answers the context and its first page. */
export async function openBrowser({ locale = 'en-US' } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'tollgate-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    locale,
    viewport: { width: 1280, height: 860 },
  });
  context.setDefaultTimeout(15_000);
  const page = context.pages()[0] ?? (await context.newPage());
  const consoleErrors = [];
  page.on('pageerror', (err) => consoleErrors.push(String(err)));
  return {
    context,
    page,
    consoleErrors,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Runs a browser step; on failure keeps a screenshot (and the page's errors) in e2e/artifacts/. */
export async function withScreenshot(page, name, fn) {
  try {
    return await fn();
  } catch (err) {
    mkdirSync(ARTIFACTS, { recursive: true });
    const file = join(ARTIFACTS, `${name.replace(/[^a-z0-9-]+/gi, '_')}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
    err.message += `\n(screenshot: ${file}; page url: ${page.url()})`;
    throw err;
  }
}

/**
 * True unless the server says it has no such route at all (code route_not_found). Lets the suite
 * skip, loudly, the parts of the contract the backend has not built yet.
 */
export async function routeExists(call, method, path, body) {
  try {
    await call(method, path, body);
    return true;
  } catch (err) {
    return !String(err.message).includes('"route_not_found"');
  }
}
