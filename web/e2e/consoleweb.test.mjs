/* global window, document, axe -- page.evaluate callbacks run in the browser */
// Browser tests of the console a reseller runs the business from (issue 13): the admin's site-wide dashboard,
// the quick start (a curl copied from it runs), the playground (an answer's tokens and cost equal its log row),
// balances that refresh without a reload, channel health without data, phone width, keyboard and axe-core,
// and zh-CN pages without untranslated keys. Real binary (SQLite + memory), a fake upstream, Chromium.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { startFakeUpstream } from './fakeUpstream.mjs';
import { apiAs, eventually, openBrowser, ROOT_PASSWORD, startTollgate, withScreenshot } from './harness.mjs';

const run = promisify(execFile);
// axe-core's source, evaluated through the DevTools protocol (the console's CSP rightly refuses inline scripts).
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const MODEL = 'gpt-4o-mini';
const PASSWORD = 'e2e-user-Passw0rd';
const suffix = Date.now().toString(36);
const USERNAME = `cw${suffix}`;
const IDLE_CHANNEL = `never-used-${suffix}`;
// Sell price 1 / 2 USD per 1M tokens: the fake upstream's 10 + 20 tokens cost 50 units a call.
const CALL_COST = 50;

let tollgate;
let upstream;
let root;
let channel;
let userId;

/** The console's USD text for units (money.ts): every significant decimal (at least two), six under a cent. */
function usd(units) {
  const tiny = units !== 0 && Math.abs(units) < 10_000;
  return new Intl.NumberFormat('en-US', {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: tiny ? 6 : 2,
    maximumFractionDigits: 6,
  }).format(units / 1e6);
}

async function signIn(page, username, password) {
  await page.goto(`${tollgate.url}/login`);
  await page.locator('#login_username').fill(username);
  await page.locator('#login_password').fill(password);
  await page.locator('form[id="login"] button[type="submit"]').click();
  await page.waitForURL(/\/console/);
}

/** Tells the page its window got the focus back (what a user switching back to the tab does). */
const focusWindow = (page) => page.evaluate(() => window.dispatchEvent(new Event('focus')));

const text = async (locator) => (await locator.innerText()).trim();

before(async () => {
  upstream = await startFakeUpstream();
  tollgate = await startTollgate({ log: 'tollgate-consoleweb.log' });
  root = await apiAs(tollgate.url);
  channel = await root('POST', '/api/admin/channels', {
    type: 'openai',
    name: `paid-line-${suffix}`,
    base_url: upstream.url,
    keys: ['sk-fake-upstream-key'],
    models: [MODEL],
    groups: ['default'],
    priority: 0,
    weight: 1,
  });
  await root('POST', '/api/admin/channels', {
    type: 'openai',
    name: IDLE_CHANNEL,
    base_url: upstream.url,
    keys: ['sk-fake-upstream-key-2'],
    models: ['gpt-4o'],
    groups: ['nobody'],
    priority: 0,
    weight: 1,
  });
  await root('PUT', '/api/admin/pricing', [{ model: MODEL, input: '1', output: '2', cache_read: '0', cache_write: '0', per_call: '0' }]);
  const res = await fetch(`${tollgate.url}/api/auth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: USERNAME, password: PASSWORD }),
  });
  assert.equal(res.status, 201, await res.text());
  const users = await root('GET', `/api/admin/users?q=${USERNAME}`);
  userId = users.items.find((u) => u.username === USERNAME).id;
});

after(async () => {
  await tollgate?.stop();
  await upstream?.close();
});

describe('a new user connects, tries the playground and sees honest numbers', () => {
  let browser;
  let key;
  const user = () => apiAs(tollgate.url, USERNAME, PASSWORD);

  before(async () => {
    browser = await openBrowser();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: tollgate.url });
    await signIn(browser.page, USERNAME, PASSWORD);
  });
  after(async () => browser?.close());

  test('the balance updates without a reload after an admin top-up', async () => {
    const { page } = browser;
    await withScreenshot(page, 'cw-topup-balance', async () => {
      await page.goto(`${tollgate.url}/console`);
      const before = (await (await user())('GET', '/api/user/self')).quota;
      await eventually(async () => (await text(page.getByTestId('header-balance'))) === usd(before), { what: 'the first balance' });
      // $4.99985: shown to the unit, never rounded to $5.00.
      await root('POST', `/api/admin/users/${userId}/quota`, { delta: 4_999_850, reason: 'e2e top-up' });
      await focusWindow(page);
      const want = usd(before + 4_999_850);
      await eventually(async () => (await text(page.getByTestId('header-balance'))) === want, { what: `header balance ${want}` });
      await eventually(async () => (await text(page.getByTestId('stat-balance'))).includes(want), { what: 'the balance card' });
      assert.ok(want.includes('4.99985') || want.includes('.99985'), want);
    });
  });

  test('copies the quick-start curl after creating a key, and the curl succeeds', async () => {
    const { page } = browser;
    const snippet = await withScreenshot(page, 'cw-quick-start', async () => {
      await page.goto(`${tollgate.url}/console/keys`);
      await page.getByTestId('quick-start').first().waitFor();
      await page.getByTestId('create-key').click();
      await page.locator('#key-form_name').fill('quick start key');
      await page.getByTestId('key-submit').click();
      const secret = page.getByTestId('key-secret');
      await secret.waitFor();
      key = await text(secret);
      const modal = page.locator('.ant-modal-wrap:visible');
      assert.equal(await text(modal.getByTestId('connect-base-url')), tollgate.url);
      const block = modal.getByTestId('snippet-openai-curl');
      // The model list of the key arrives: the snippet names a model the key offers.
      await eventually(async () => (await text(block)).includes(MODEL), { what: 'the curl snippet with the model' });
      // A click the page did not act on (CI once timed out with the clipboard never holding the curl; not
      // reproduced here, idle or loaded) is clicked again, as a user would; the error says what the clipboard held.
      const copied = await eventually(async () => {
        await page.bringToFront(); // navigator.clipboard.writeText refuses a page without the focus
        await block.locator('.ant-typography-copy').click();
        let clip = '';
        for (let i = 0; i < 8 && !clip.includes('curl'); i++) {
          await new Promise((r) => setTimeout(r, 250));
          clip = await page.evaluate(() => navigator.clipboard.readText());
        }
        if (!clip.includes('curl')) throw new Error(`the clipboard holds ${JSON.stringify(clip.slice(0, 80))}`);
        return clip;
      }, { timeout: 25_000, what: 'the copied curl in the clipboard' });
      for (const id of ['anthropic-curl', 'gemini-curl']) {
        await modal.getByRole('tab', { name: id.startsWith('anthropic') ? 'Anthropic' : 'Gemini' }).click();
        assert.ok((await text(modal.getByTestId(`snippet-${id}`))).includes(key), `${id} has the key`);
      }
      await modal.getByRole('tab', { name: 'Coding CLIs' }).click();
      const claude = await text(modal.getByTestId('snippet-claude-code'));
      assert.ok(claude.includes(`ANTHROPIC_BASE_URL="${tollgate.url}"`) && claude.includes(`ANTHROPIC_AUTH_TOKEN="${key}"`), claude);
      assert.ok((await text(modal.getByTestId('snippet-codex'))).includes(`base_url = "${tollgate.url}/v1"`));
      assert.ok((await text(modal.getByTestId('snippet-gemini-cli'))).includes(`GEMINI_API_KEY="${key}"`));
      return copied;
    });
    assert.ok(snippet.includes(key), 'the copied curl carries the new key');
    const { stdout } = await run('bash', ['-c', snippet], { timeout: 30_000 });
    const answer = JSON.parse(stdout);
    assert.equal(answer.choices?.[0]?.message?.content, 'Hello from the fake upstream.', stdout);
    assert.equal(answer.usage?.total_tokens, 30);
  });

  test('the balance drops without a reload after a call', async () => {
    const { page } = browser;
    const call = await user();
    await withScreenshot(page, 'cw-call-balance', async () => {
      await page.keyboard.press('Escape');
      const spent = await eventually(async () => {
        const self = await call('GET', '/api/user/self');
        return self.used_quota >= CALL_COST ? self : null;
      }, { what: 'the call settled' });
      await focusWindow(page);
      await eventually(async () => (await text(page.getByTestId('header-balance'))) === usd(spent.quota), { what: `balance ${usd(spent.quota)}` });
    });
  });

  test('a playground answer shows the tokens and cost of its log row', async () => {
    const { page } = browser;
    const shown = await withScreenshot(page, 'cw-playground', async () => {
      await page.goto(`${tollgate.url}/console/playground`);
      await page.getByRole('heading', { level: 1, name: 'Playground' }).waitFor();
      await page.getByTestId('pg-key').click();
      await page.locator('.ant-select-item-option', { hasText: 'quick start key' }).click();
      await eventually(async () => (await text(page.getByTestId('pg-model'))).includes(MODEL), { what: 'the key’s model' });
      await page.locator('#pg-system').fill('You are terse.');
      await page.locator('#pg-temperature').fill('0.3');
      await page.locator('#pg-max-tokens').fill('64');
      const before = await text(page.getByTestId('header-balance'));
      await page.getByTestId('pg-input').fill('Say hello');
      await page.getByTestId('pg-send').click();
      await eventually(async () => (await text(page.getByTestId('pg-text-1'))) === 'Hello there.', { what: 'the streamed answer' });
      await eventually(async () => (await text(page.getByTestId('pg-cost-1'))).startsWith('$'), { timeout: 25_000, what: 'the log row’s cost' });
      // The call changed the balance: the header shows it without a reload or a focus.
      await eventually(async () => (await text(page.getByTestId('header-balance'))) !== before, { what: 'the balance after the playground call' });
      return {
        requestId: await text(page.getByTestId('pg-request-1')),
        prompt: await text(page.getByTestId('pg-prompt-1')),
        completion: await text(page.getByTestId('pg-completion-1')),
        cost: await text(page.getByTestId('pg-cost-1')),
        latency: await text(page.getByTestId('pg-latency-1')),
      };
    });
    const logs = await (await user())('GET', `/api/logs?request_id=${shown.requestId}`);
    const row = logs.items[0];
    assert.ok(row, 'the answer has a log row');
    assert.equal(shown.prompt, String(row.prompt_tokens));
    assert.equal(shown.completion, String(row.completion_tokens));
    assert.equal(shown.cost, usd(row.cost));
    assert.equal(row.cost, CALL_COST);
    assert.equal(upstream.requests.at(-1).body.temperature, 0.3);
    assert.equal(upstream.requests.at(-1).body.max_tokens, 64);
    assert.equal(upstream.requests.at(-1).body.messages[0].content, 'You are terse.');
    assert.ok(row.stream, 'the playground streams');
  });

  test('at phone width the logs show cost and status without scrolling sideways; rows open with Enter', async () => {
    const { page } = browser;
    await withScreenshot(page, 'cw-phone', async () => {
      await page.setViewportSize({ width: 375, height: 740 });
      await page.goto(`${tollgate.url}/console/logs`);
      const card = page.getByTestId('log-card').first();
      await card.waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
      for (const id of ['log-cost', 'log-status']) {
        const box = await card.getByTestId(id).boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= 375, `${id} inside the screen: ${JSON.stringify(box)}`);
      }
      assert.equal(await text(card.getByTestId('log-cost')), usd(CALL_COST));
      await page.setViewportSize({ width: 1280, height: 860 });
      // Keyboard: Tab reaches the rows; Enter opens the drawer. The phone's cards are rows of a table too: wait
      // until they are gone, or the row focused may be one the wide table replaces before Enter reaches it.
      await card.waitFor({ state: 'detached' });
      const row = page.locator('.ant-table-tbody tr.ant-table-row').first();
      await row.waitFor();
      await row.focus();
      await page.waitForFunction(() => document.activeElement?.matches('tr.ant-table-row'));
      await page.keyboard.press('Enter');
      await page.locator('.ant-drawer-open').waitFor();
    });
  });
});

describe('the admin', () => {
  let browser;
  before(async () => {
    browser = await openBrowser();
    await signIn(browser.page, 'root', ROOT_PASSWORD);
  });
  after(async () => browser?.close());

  test('root’s dashboard shows the users’ paid calls and not the channel tests', async () => {
    // Two channel tests by root: logged as tests, never revenue.
    for (let i = 0; i < 2; i++) await root('POST', `/api/admin/channels/${channel.id}/test`, {});
    const paid = await eventually(async () => {
      const rows = (await root('GET', `/api/admin/logs?user_id=${userId}`)).items.filter((l) => l.status === 'success');
      return rows.length >= 2 ? rows : null;
    }, { what: 'the user’s calls logged' });
    const revenue = paid.reduce((s, l) => s + l.cost, 0);
    const { page } = browser;
    await withScreenshot(page, 'cw-site-dashboard', async () => {
      await page.goto(`${tollgate.url}/console`);
      const site = page.getByTestId('site-dashboard');
      await site.waitFor();
      await eventually(async () => (await text(page.getByTestId('site-requests'))).endsWith(String(paid.length)), { what: `${paid.length} requests` });
      assert.ok((await text(page.getByTestId('site-revenue'))).includes(usd(revenue)));
      assert.ok((await text(page.getByTestId('site-success'))).includes('100'));
      await eventually(async () => (await text(page.getByTestId('site-users'))).endsWith('1'), { what: 'one active user' });
      assert.ok((await text(page.getByTestId('site-keys'))).endsWith('1'));
      assert.ok((await text(page.getByTestId('site-top-users'))).includes(USERNAME), 'the user is a top user');
      assert.equal(await text(page.getByTestId(`site-user-revenue-${userId}`)), usd(revenue));
      assert.ok((await text(page.getByTestId('site-top-models'))).includes(MODEL));
      // Root's own calls were tests only: its personal figures count nothing.
      assert.ok(!(await text(page.getByTestId('site-top-users'))).includes('root'));
    });
    const logs = await root('GET', '/api/admin/logs?type=test');
    assert.ok(logs.items.some((l) => l.is_test), 'the tests were logged (as tests)');
  });

  test('a never-used channel shows "No data", not "Healthy"', async () => {
    const { page } = browser;
    await withScreenshot(page, 'cw-no-data', async () => {
      await page.goto(`${tollgate.url}/console/admin/channels`);
      const row = page.locator('.ant-table-tbody tr.ant-table-row', { hasText: IDLE_CHANNEL });
      await row.waitFor();
      assert.equal(await text(row.getByTestId('health-state')), 'No data');
      assert.ok(!(await text(row)).includes('Healthy'));
    });
  });
});

describe('channel health from tests', () => {
  let browser;
  before(async () => {
    browser = await openBrowser();
    await signIn(browser.page, 'root', ROOT_PASSWORD);
  });
  after(async () => browser?.close());

  test('a channel that failed its tests is not "Healthy"; a passed test fills the latency column', async () => {
    const dead = await root('POST', '/api/admin/channels', {
      type: 'openai',
      name: `dead-line-${suffix}`,
      base_url: 'http://127.0.0.1:9',
      keys: ['sk-dead'],
      models: ['gpt-4o'],
      groups: ['nobody'],
      priority: 0,
      weight: 1,
    });
    const ok = await root('POST', '/api/admin/channels', {
      type: 'openai',
      name: `tested-line-${suffix}`,
      base_url: upstream.url,
      keys: ['sk-fake-upstream-key-3'],
      models: [MODEL],
      groups: ['nobody'],
      priority: 0,
      weight: 1,
    });
    const { page } = browser;
    await withScreenshot(page, 'cw-tested-health', async () => {
      await page.goto(`${tollgate.url}/console/admin/channels`);
      const deadRow = page.locator('.ant-table-tbody tr.ant-table-row', { hasText: dead.name });
      const okRow = page.locator('.ant-table-tbody tr.ant-table-row', { hasText: ok.name });
      await deadRow.waitFor();
      assert.equal(await text(deadRow.getByTestId('health-state')), 'No data');
      // Tested from the page, as an admin does: the rows update without a reload.
      for (let i = 0; i < 2; i++) {
        await deadRow.getByRole('button', { name: 'Test' }).click();
        await page.locator('.ant-message-notice').last().waitFor();
      }
      await okRow.getByRole('button', { name: 'Test' }).click();
      await eventually(async () => (await text(deadRow.getByTestId('health-state'))) !== 'No data', { what: 'the failed tests counted' });
      const state = await text(deadRow.getByTestId('health-state'));
      assert.ok(state !== 'Healthy', `a channel that failed every test shows ${state}`);
      await eventually(async () => (await text(okRow.getByTestId('health-state'))) === 'Healthy', { what: 'the passed test shown' });
      // The latency column shows the test's latency, said to be a test's (no live traffic to go by).
      assert.match(await text(okRow.getByTestId('channel-test-latency')), /^Test: \d+(\.\d+)?\s*(ms|s)$/);
      assert.equal(await text(deadRow.getByTestId('health-state')), 'Failing');
    });
  });
});

const PAGES_OUT = ['/login', '/register', '/forgot-password'];
const PAGES_USER = ['/console', '/console/keys', '/console/logs', '/console/playground', '/console/wallet', '/console/pricing', '/console/profile'];
const PAGES_ADMIN = [
  '/console',
  '/console/admin/business',
  '/console/admin/channels',
  '/console/admin/users',
  '/console/admin/keys',
  '/console/admin/groups',
  '/console/admin/tiers',
  '/console/admin/pricing',
  '/console/admin/logs',
  '/console/admin/orders',
  '/console/admin/redemptions',
  '/console/admin/payment',
  '/console/admin/settings',
  '/console/admin/alerts',
  '/console/admin/audit',
];

/** Loads a page and waits for its content (its h1) to render. */
async function settle(page, path) {
  await page.goto(`${tollgate.url}${path}`);
  await page.locator('h1').first().waitFor();
  await page.waitForLoadState('networkidle').catch(() => undefined);
  await page.waitForTimeout(300);
}

describe('accessibility and languages', () => {
  test('axe-core finds no serious or critical violation on any page; one h1 and a navigation landmark', async () => {
    const found = [];
    for (const [who, pages] of [['visitor', PAGES_OUT], [USERNAME, PAGES_USER], ['root', PAGES_ADMIN]]) {
      const browser = await openBrowser();
      try {
        if (who !== 'visitor') await signIn(browser.page, who, who === 'root' ? ROOT_PASSWORD : PASSWORD);
        for (const path of pages) {
          await withScreenshot(browser.page, `cw-axe-${who}-${path}`, async () => {
            await settle(browser.page, path);
            await browser.page.evaluate(AXE);
            const result = await browser.page.evaluate(async () => {
              const r = await axe.run(document, { resultTypes: ['violations'] });
              return {
                violations: r.violations
                  .filter((v) => v.impact === 'serious' || v.impact === 'critical')
                  .map((v) => ({
                    id: v.id,
                    impact: v.impact,
                    nodes: v.nodes.slice(0, 3).map((n) => {
                      const d = n.any?.[0]?.data;
                      return n.target.join(' ') + (d?.fgColor ? ` (${d.fgColor} on ${d.bgColor}: ${d.contrastRatio})` : '');
                    }),
                  })),
                h1: document.querySelectorAll('h1').length,
                nav: document.querySelectorAll('nav, [role="navigation"]').length,
              };
            });
            for (const v of result.violations) found.push(`${who} ${path}: ${v.impact} ${v.id} at ${v.nodes.join(' | ')}`);
            if (result.h1 !== 1) found.push(`${who} ${path}: ${result.h1} h1 elements`);
            if (who !== 'visitor' && result.nav < 1) found.push(`${who} ${path}: no navigation landmark`);
          });
        }
      } finally {
        await browser.close();
      }
    }
    assert.deepEqual(found, []);
  });

  test('zh-CN pages show no untranslated catalogue key', async () => {
    const browser = await openBrowser({ locale: 'zh-CN' });
    const found = [];
    try {
      await signIn(browser.page, 'root', ROOT_PASSWORD);
      for (const path of [...new Set([...PAGES_USER, ...PAGES_ADMIN])]) {
        await withScreenshot(browser.page, `cw-zh-${path}`, async () => {
          await settle(browser.page, path);
          const lines = await browser.page.evaluate(() => document.body.innerText.split('\n').map((l) => l.trim()).filter(Boolean));
          assert.ok(lines.some((l) => /[\u4e00-\u9fff]/.test(l)), `${path} is in Chinese`);
          for (const line of lines) if (/^[a-z]+(\.[a-zA-Z_]+)+$/.test(line)) found.push(`${path}: ${line}`);
        });
      }
    } finally {
      await browser.close();
    }
    assert.deepEqual(found, []);
  });
});
