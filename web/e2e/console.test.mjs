// Browser tests of the console against the real binary (SQLite + memory) and a fake upstream.
// Run with `npm run e2e`; needs TOLLGATE_BIN (default ../tollgate) built with the current web/dist.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFakeUpstream } from './fakeUpstream.mjs';
import {
  apiAs,
  eventually,
  openBrowser,
  resetArtifacts,
  ROOT_PASSWORD,
  routeExists,
  startTollgate,
  withScreenshot,
} from './harness.mjs';

const MODEL = 'gpt-4o-mini';
let tollgate;
let upstream;

before(async () => {
  resetArtifacts();
  upstream = await startFakeUpstream();
  tollgate = await startTollgate();
});

after(async () => {
  await tollgate?.stop();
  await upstream?.close();
});

async function signIn(page, username, password) {
  await page.goto(`${tollgate.url}/login`);
  await page.locator('#login_username').fill(username);
  await page.locator('#login_password').fill(password);
  await page.locator('form[id="login"] button[type="submit"]').click();
  await page.waitForURL(/\/console/);
}

/** Finds the table row that shows `text`. */
function rowWith(page, text) {
  return page.locator('.ant-table-tbody tr.ant-table-row', { hasText: text });
}

describe('user: sign up, create a key, call the API, see the cost', () => {
  test('the call appears in the usage logs with its cost', async () => {
    const browser = await openBrowser();
    const { page } = browser;
    const username = `e2e${Date.now().toString(36)}`;
    const password = 'e2e-user-Passw0rd';
    try {
      await withScreenshot(page, 'flow1-signup', async () => {
        await page.goto(`${tollgate.url}/register`);
        await page.locator('#register_username').fill(username);
        await page.locator('#register_password').fill(password);
        await page.locator('#register_confirm').fill(password);
        await page.locator('form[id="register"] button[type="submit"]').click();
        await page.waitForURL(/\/console$/);
        await page.getByTestId('stat-balance').waitFor();
      });

      const key = await withScreenshot(page, 'flow1-create-key', async () => {
        await page.goto(`${tollgate.url}/console/keys`);
        await page.getByTestId('create-key').click();
        await page.locator('#key-form_name').fill('e2e key');
        await page.getByTestId('key-submit').click();
        const secret = page.getByTestId('key-secret');
        await secret.waitFor();
        const text = (await secret.innerText()).trim();
        assert.match(text, /^sk-[A-Za-z0-9]{20,}$/, 'the new key is shown in clear once');
        await page.getByRole('button', { name: /done/i }).click();
        await rowWith(page, 'e2e key').waitFor();
        return text;
      });

      const root = await apiAs(tollgate.url);
      const users = await root('GET', `/api/admin/users?q=${encodeURIComponent(username)}`);
      const user = users.items.find((u) => u.username === username);
      assert.ok(user, 'root finds the new user');
      await root('POST', '/api/admin/channels', {
        type: 'openai',
        name: 'fake upstream (api)',
        base_url: upstream.url,
        keys: ['sk-fake-upstream-key'],
        models: [MODEL],
        groups: ['default'],
        priority: 0,
        weight: 1,
      });
      await root('PUT', '/api/admin/pricing', [
        { model: MODEL, input: '1', output: '2', cache_read: '0', cache_write: '0', per_call: '0' },
      ]);
      await root('POST', `/api/admin/users/${user.id}/quota`, { delta: 10_000_000, reason: 'e2e top-up' });

      const completion = await eventually(
        async () => {
          const res = await fetch(`${tollgate.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
          });
          if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
          return res.json();
        },
        { timeout: 10_000, what: 'a successful /v1/chat/completions call' },
      );
      assert.equal(completion.usage.prompt_tokens, 10);
      assert.equal(completion.usage.completion_tokens, 20);

      await withScreenshot(page, 'flow1-usage-logs', async () => {
        await page.goto(`${tollgate.url}/console/logs`);
        const row = rowWith(page, MODEL);
        await eventually(
          async () => {
            if (await row.count()) return true;
            await page.getByRole('button', { name: /refresh/i }).click();
            return false;
          },
          { timeout: 20_000, interval: 1000, what: 'the call in the usage logs' },
        );
        assert.equal((await row.first().getByTestId('log-cost').innerText()).trim(), '$0.000050');
        await row.first().click();
        const cost = page.getByTestId('log-detail-cost');
        await cost.waitFor();
        assert.equal((await cost.innerText()).trim(), '$0.000050');
      });
    } finally {
      await browser.close();
    }
  });
});

describe('admin: create a channel, test it, see its health', () => {
  const name = `ui-channel-${Date.now().toString(36)}`;
  let browser;
  let pending = {};

  before(async () => {
    const root = await apiAs(tollgate.url);
    pending = {
      test: !(await routeExists(root, 'POST', '/api/admin/channels/0/test', {})),
      testAll: !(await routeExists(root, 'GET', '/api/admin/channels/test/none')),
      health: !(await routeExists(root, 'GET', '/api/admin/channels/0/health')),
    };
    browser = await openBrowser();
    await signIn(browser.page, 'root', ROOT_PASSWORD);
  });

  after(async () => {
    await browser?.close();
  });

  test('creates a channel in the UI', async () => {
    const { page } = browser;
    await withScreenshot(page, 'flow2-create-channel', async () => {
      await page.goto(`${tollgate.url}/console/admin/channels`);
      await page.getByTestId('create-channel').click();
      await page.locator('#channel-form_name').fill(name);
      await page.locator('#channel-form_base_url').fill(upstream.url);
      await page.locator('#channel-form_keys_text').fill('sk-fake-one\nsk-fake-two');
      const models = page.locator('#channel-form_models');
      await models.fill(MODEL);
      await models.press('Enter');
      await page.keyboard.press('Escape');
      await page.getByTestId('channel-submit').click();
      await rowWith(page, name).waitFor();
    });
  });

  test('fetches the upstream models into the editor', async () => {
    const { page } = browser;
    await withScreenshot(page, 'flow2-fetch-models', async () => {
      await rowWith(page, name).getByRole('button', { name: /^edit$/i }).click();
      await page.getByTestId('fetch-models').click();
      await page.locator('.ant-message-success', { hasText: /fetched 2 models/i }).last().waitFor();
      await page.getByTestId('add-fetched-models').click();
      await page.locator('.ant-drawer-open .ant-select-selection-item', { hasText: 'gpt-4o' }).first().waitFor();
      await page.getByTestId('channel-submit').click();
      await page.locator('.ant-message-success', { hasText: /saved/i }).last().waitFor();
      await rowWith(page, name).getByText('2 models').waitFor();
    });
  });

  test('tests the channel and shows it healthy', async (t) => {
    if (pending.test || pending.health) {
      t.skip('PENDING BACKEND: POST /api/admin/channels/:id/test or GET /api/admin/channels/:id/health answers route_not_found');
      return;
    }
    const { page } = browser;
    await withScreenshot(page, 'flow2-test-channel', async () => {
      const row = rowWith(page, name);
      const before = upstream.requests.length;
      await row.getByRole('button', { name: /^test$/i }).click();
      await page.locator('.ant-message-success', { hasText: name }).last().waitFor();
      assert.ok(upstream.requests.length > before, 'the test reached the upstream');
      await eventually(async () => (await row.getByTestId('health-state').innerText()).trim() === 'Healthy', {
        what: 'the health tag to read Healthy',
      });
      await row.getByRole('button', { name: /^health$/i }).click();
      await page.locator('.ant-drawer').getByTestId('health-state').first().waitFor();
      await page.keyboard.press('Escape');
    });
  });

  test('tests all channels with progress', async (t) => {
    if (pending.testAll) {
      t.skip('PENDING BACKEND: POST /api/admin/channels/test and GET /api/admin/channels/test/:job answer route_not_found');
      return;
    }
    const { page } = browser;
    await withScreenshot(page, 'flow2-test-all', async () => {
      await page.getByTestId('test-all').click();
      const progress = page.getByTestId('test-progress');
      await progress.waitFor();
      await page.locator('.ant-modal .ant-progress-status-success').waitFor({ timeout: 30_000 });
      await page.keyboard.press('Escape');
    });
  });
});

describe('language switch', () => {
  test('switching to zh-CN changes the UI text and is remembered', async () => {
    const browser = await openBrowser({ locale: 'en-US' });
    const { page } = browser;
    try {
      await withScreenshot(page, 'flow3-language', async () => {
        await page.goto(`${tollgate.url}/login`);
        await page.getByText('Sign in to your console').waitFor();
        await page.getByTestId('language-switch').selectOption('zh-CN');
        await page.getByText('登录控制台').waitFor();
        await page.reload();
        await page.getByText('登录控制台').waitFor();
        await page.locator('#login_username').fill('root');
        await page.locator('#login_password').fill('not-the-password');
        await page.locator('form[id="login"] button[type="submit"]').click();
        const error = page.getByTestId('login-error');
        await error.waitFor();
        assert.match(await error.innerText(), /[\u4e00-\u9fff]/, 'the server answers in Chinese when the UI is Chinese');
        await signIn(page, 'root', ROOT_PASSWORD);
        await page.locator('.ant-menu').getByText('API 密钥', { exact: true }).waitFor();
        await page.locator('.ant-menu').getByText('渠道', { exact: true }).waitFor();
        assert.equal(await page.locator('html').getAttribute('lang'), 'zh-CN');
      });
    } finally {
      await browser.close();
    }
  });
});

describe('phone width', () => {
  test('pages fit a 390 px screen and the menu opens and navigates', async () => {
    const browser = await openBrowser();
    const { page } = browser;
    try {
      await page.setViewportSize({ width: 390, height: 800 });
      // A row on every list the cards are checked on.
      const root = await apiAs(tollgate.url);
      await root('POST', '/api/tokens', { name: 'phone-card-key' });
      await root('POST', '/api/admin/channels', {
        type: 'openai', name: 'phone-card-channel', base_url: upstream.url, keys: ['sk-phone'], models: [MODEL],
        groups: ['default'], priority: 0, weight: 1,
      });
      await withScreenshot(page, 'phone-width', async () => {
        await signIn(page, 'root', ROOT_PASSWORD);
        // Lists become cards with their key facts (ResponsiveTable): each card is on screen, nothing sideways.
        for (const [path, name, facts] of [
          ['/console/keys', 'phone-card-key', ['Name', 'Status']],
          ['/console/admin/keys', 'phone-card-key', ['Name', 'Status']],
          ['/console/admin/channels', 'phone-card-channel', ['Name', 'Status', 'Priority']],
          ['/console/admin/users', 'root', ['Username', 'Status']],
        ]) {
          await page.goto(`${tollgate.url}${path}`);
          await page.locator('h1').first().waitFor();
          const card = page.getByTestId('phone-card').filter({ hasText: name }).first();
          await card.waitFor();
          for (const fact of facts) {
            assert.ok(await card.locator('dt', { hasText: fact }).first().isVisible(), `${path}: the card shows ${fact}`);
          }
          const box = await card.boundingBox();
          assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `${path}: the card is ${JSON.stringify(box)} on a 390px screen`);
          const width = await page.locator('body').evaluate((body) => body.scrollWidth);
          assert.ok(width <= 391, `${path} is ${width}px wide on a 390px screen`);
        }
        for (const path of [
          '/console',
          '/console/keys',
          '/console/logs',
          '/console/wallet',
          '/console/admin/channels',
          '/console/admin/redemptions',
          '/console/admin/orders',
          '/console/admin/payment',
          '/console/admin/users',
          '/console/admin/keys',
        ]) {
          await page.goto(`${tollgate.url}${path}`);
          await page.locator('h1').first().waitFor();
          const width = await page.locator('body').evaluate((body) => body.scrollWidth);
          assert.ok(width <= 391, `${path} is ${width}px wide on a 390px screen`);
        }
        await page.getByRole('button', { name: 'Toggle menu' }).click();
        await page.locator('.ant-menu').getByText('API keys', { exact: true }).click();
        await page.waitForURL(/\/console\/keys$/);
        await page.getByTestId('create-key').waitFor();
      });
    } finally {
      await browser.close();
    }
  });
});

describe('registration closed', () => {
  test('the sign-up page says so', async () => {
    const root = await apiAs(tollgate.url);
    await root('PUT', '/api/admin/settings', { registration_open: false });
    const browser = await openBrowser();
    const { page } = browser;
    try {
      await withScreenshot(page, 'registration-closed', async () => {
        await page.goto(`${tollgate.url}/register`);
        await page.getByTestId('registration-closed').waitFor();
        await page.getByText('Registration is closed').waitFor();
        assert.equal(await page.locator('#register_username').count(), 0);
      });
    } finally {
      await browser.close();
      await root('PUT', '/api/admin/settings', { registration_open: true });
    }
  });
});

describe('security headers', () => {
  test('the console renders every page under its CSP with no violation', async () => {
    const res = await fetch(`${tollgate.url}/console`);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');

    const browser = await openBrowser();
    const { page } = browser;
    const violations = [];
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) violations.push(msg.text());
    });
    await page.addInitScript(() => {
      // Runs in the page, where document exists.
      // eslint-disable-next-line no-undef
      document.addEventListener('securitypolicyviolation', (e) => {
        console.error(`Content Security Policy violation: ${e.violatedDirective} ${e.blockedURI}`);
      });
    });
    try {
      await withScreenshot(page, 'csp', async () => {
        await signIn(page, 'root', ROOT_PASSWORD);
        // The dashboard (SVG charts), tables, forms, drawers and the logs chart: everything the console draws.
        for (const path of [
          '/console',
          '/console/logs',
          '/console/keys',
          '/console/wallet',
          '/console/admin/channels',
          '/console/admin/settings',
          '/console/admin/payment',
          '/console/admin/redemptions',
          '/console/admin/orders',
          '/console/admin/logs',
        ]) {
          await page.goto(`${tollgate.url}${path}`);
          await page.locator('.ant-layout').first().waitFor();
          await page.waitForLoadState('networkidle');
        }
        await page.goto(`${tollgate.url}/console/admin/channels`);
        await page.getByTestId('create-channel').click();
        await page.locator('#channel-form_name').waitFor();
        assert.deepEqual(violations, []);
        assert.deepEqual(browser.consoleErrors, []);
      });
    } finally {
      await browser.close();
    }
  });
});
