// Browser tests of running the business (issue 12): a channel's cost price set in the channel form, the Business
// page's revenue / upstream cost / profit against the stats API, a new-api ratio file imported (dry run, then
// saved) and shown on the user's pricing page, and the alert settings and alert log. Real binary (SQLite +
// memory), a fake upstream, Chromium.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeUpstream } from './fakeUpstream.mjs';
import { apiAs, eventually, openBrowser, ROOT_PASSWORD, routeExists, startTollgate, withScreenshot } from './harness.mjs';

const MODEL = 'gpt-4o-mini';
const suffix = Date.now().toString(36);
const CHANNEL = `costed-line-${suffix}`;
const IMPORTED = `e2e-imported-${suffix}`;
const CALLS = 3;

let tollgate;
let upstream;
let root;
let browser;
let channel;
let tmp;
const pending = {};

/** USD text the console shows for an amount of units in the default display (USD): six decimals under a cent. */
function usd(units) {
  const abs = Math.abs(units);
  const text = abs !== 0 && abs < 10_000 ? (abs / 1e6).toFixed(6) : (abs / 1e6).toFixed(2);
  return `${units < 0 ? '-' : ''}$${text}`;
}

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'tollgate-e2e-business-'));
  upstream = await startFakeUpstream();
  tollgate = await startTollgate({ log: 'tollgate-business.log' });
  root = await apiAs(tollgate.url);
  pending.stats = !(await routeExists(root, 'GET', '/api/admin/stats/channels'));
  pending.import = !(await routeExists(root, 'POST', '/api/admin/pricing/import?dry_run=1', { model_ratio: {} }));
  pending.alerts = !(await routeExists(root, 'GET', '/api/admin/alerts'));
  channel = await root('POST', '/api/admin/channels', {
    type: 'openai',
    name: CHANNEL,
    base_url: upstream.url,
    keys: ['sk-fake-upstream-key'],
    models: [MODEL],
    groups: ['default'],
    priority: 0,
    weight: 1,
  });
  // Sell price 1 / 2 USD per 1M: the fake upstream's 10 + 20 tokens cost the caller 50 units a call.
  await root('PUT', '/api/admin/pricing', [{ model: MODEL, input: '1', output: '2', cache_read: '0', cache_write: '0', per_call: '0' }]);

  browser = await openBrowser();
  const { page } = browser;
  await page.goto(`${tollgate.url}/login`);
  await page.locator('#login_username').fill('root');
  await page.locator('#login_password').fill(ROOT_PASSWORD);
  await page.locator('form[id="login"] button[type="submit"]').click();
  await page.waitForURL(/\/console/);
});

after(async () => {
  await browser?.close();
  await tollgate?.stop();
  await upstream?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

function rowWith(page, text) {
  return page.locator('.ant-table-tbody tr.ant-table-row', { hasText: text });
}

describe('admin: running the business', () => {
  test('a cost price set in the channel form gives the Business page the API’s revenue, cost and profit', async (t) => {
    const { page } = browser;
    await withScreenshot(page, 'business-cost-price', async () => {
      await page.goto(`${tollgate.url}/console/admin/channels`);
      const row = rowWith(page, CHANNEL);
      await row.waitFor();
      await row.getByRole('button', { name: /^edit$/i }).click();
      const drawer = page.locator('.ant-drawer-open');
      await drawer.getByTestId('cost-mode').getByText('A price list').click();
      await drawer.getByTestId('cost-price-input').fill('0.5');
      await drawer.getByTestId('cost-price-output').fill('1.5');
      await page.getByTestId('channel-submit').click();
      await page.locator('.ant-message-success', { hasText: /saved/i }).last().waitFor();
    });
    const stored = await root('GET', `/api/admin/channels/${channel.id}`);
    assert.equal(Number(stored.cost_price?.input), 0.5, JSON.stringify(stored.cost_price));
    assert.equal(Number(stored.cost_price?.output), 1.5);
    assert.ok(!stored.cost_ratio, 'no ratio next to the price');

    await root('POST', '/api/admin/users/1/quota', { delta: 10_000_000, reason: 'e2e top-up' });
    const token = await root('POST', '/api/tokens', { name: `biz-${suffix}`, unlimited: true });
    for (let i = 0; i < CALLS; i++) {
      await eventually(
        async () => {
          const res = await fetch(`${tollgate.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${token.key}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: `hi ${i}` }] }),
          });
          if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
          return true;
        },
        { timeout: 10_000, what: `relay call ${i + 1}` },
      );
    }

    if (pending.stats) {
      t.skip('PENDING BACKEND: GET /api/admin/stats/channels answers route_not_found');
      return;
    }
    // The log writer is asynchronous: wait until the report counts every call.
    const item = await eventually(
      async () => {
        const rep = await root('GET', '/api/admin/stats/channels');
        const it = rep.items.find((x) => x.channel_id === channel.id);
        return it && it.requests === CALLS ? it : null;
      },
      { timeout: 20_000, what: `${CALLS} requests in the channel report` },
    );
    // 10 prompt + 20 completion tokens a call: sell 10×1 + 20×2 = 50 units, cost 10×0.5 + 20×1.5 = 35 units.
    assert.equal(item.revenue, CALLS * 50);
    assert.equal(item.upstream_cost, CALLS * 35);
    assert.equal(item.profit, CALLS * 15);

    await withScreenshot(page, 'business-page', async () => {
      await page.goto(`${tollgate.url}/console/admin/business`);
      await page.getByRole('heading', { name: 'Business' }).waitFor();
      const revenue = page.getByTestId(`biz-revenue-${channel.id}`);
      await revenue.waitFor();
      assert.equal((await revenue.innerText()).trim(), usd(item.revenue));
      assert.equal((await page.getByTestId(`biz-cost-${channel.id}`).innerText()).trim(), usd(item.upstream_cost));
      assert.equal((await page.getByTestId(`biz-profit-${channel.id}`).innerText()).trim(), usd(item.profit));
      const row = rowWith(page, CHANNEL);
      assert.ok((await row.innerText()).includes(String(CALLS)), 'the request count is in the channel row');
      assert.ok((await page.getByTestId('biz-total-profit').innerText()).includes(usd(item.profit)));
      // The table sorts by profit when its header is clicked (no error, same row still there).
      await page.getByTestId('business-channels').getByRole('columnheader', { name: 'Profit', exact: true }).first().click();
      await row.waitFor();
    });
    assert.deepEqual(browser.consoleErrors, []);
  });

  test('imports a new-api ratio file (dry run, then save) and the pricing page shows the price', async (t) => {
    if (pending.import) {
      t.skip('PENDING BACKEND: POST /api/admin/pricing/import answers route_not_found');
      return;
    }
    const file = join(tmp, 'ratios.json');
    // new-api: ratio 0.75 = 1.5 USD per 1M input tokens; completion ratio 4 → output 6 USD.
    writeFileSync(file, JSON.stringify({ model_ratio: { [IMPORTED]: 0.75 }, completion_ratio: { [IMPORTED]: 4 } }));
    const { page } = browser;
    await withScreenshot(page, 'business-import', async () => {
      await page.goto(`${tollgate.url}/console/admin/pricing`);
      await page.getByTestId('price-import').click();
      const modal = page.locator('.ant-modal-wrap:visible');
      await modal.locator('input[type="file"]').setInputFiles(file);
      await modal.getByTestId('price-import-preview').waitFor();
      assert.equal((await modal.getByTestId('price-import-added').innerText()).trim(), '1');
      assert.equal((await modal.getByTestId('price-import-changed').innerText()).trim(), '0');
      // Nothing saved by the dry run.
      const before = await root('GET', '/api/admin/pricing');
      assert.ok(!before.some((r) => r.model === IMPORTED), 'the dry run saved nothing');
      await page.getByTestId('price-import-confirm').click();
      await page.locator('.ant-message-success', { hasText: /saved/i }).last().waitFor();
    });
    const table = await root('GET', '/api/admin/pricing');
    const row = table.find((r) => r.model === IMPORTED);
    assert.ok(row, 'the imported model is in the table');
    assert.equal(Number(row.input), 1.5);
    assert.equal(Number(row.output), 6);
    assert.ok(table.some((r) => r.model === MODEL), 'merge kept the existing price');

    await withScreenshot(page, 'business-pricing-page', async () => {
      await page.goto(`${tollgate.url}/console/pricing`);
      await page.getByTestId('pricing-search').locator('input').fill(IMPORTED);
      const input = page.getByTestId(`price-input-${IMPORTED}`);
      await input.waitFor();
      assert.equal((await input.innerText()).trim(), '$1.50');
      assert.equal((await page.getByTestId(`price-output-${IMPORTED}`).innerText()).trim(), '$6.00');
      await eventually(async () => (await rowWith(page, MODEL).count()) === 0, { what: 'the search to hide other models' });
    });
  });

  test('saves a webhook in the alert settings, test-sends it, and the alerts page lists the delivery', async (t) => {
    if (pending.alerts) {
      t.skip('PENDING BACKEND: GET /api/admin/alerts answers route_not_found');
      return;
    }
    const received = [];
    const receiver = createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
    const hookUrl = `http://127.0.0.1:${receiver.address().port}/hook`;
    const { page } = browser;
    try {
      await withScreenshot(page, 'business-alert-settings', async () => {
        await page.goto(`${tollgate.url}/console/admin/settings`);
        const card = page.getByTestId('alerts-card');
        await card.waitFor();
        await card.getByTestId('add-webhook').click();
        const hook = card.getByTestId('webhook-row').first();
        await hook.getByLabel('Webhook URL').fill(hookUrl);
        await hook.getByLabel('Signing secret').fill('e2e-webhook-secret-0123456789');
        await page.getByRole('button', { name: /^save$/i }).first().click();
        await page.locator('.ant-message-success', { hasText: /saved/i }).last().waitFor();
      });
      const settings = await root('GET', '/api/admin/settings');
      assert.equal(settings.alerts.webhooks[0]?.url, hookUrl);
      assert.ok(settings.alerts.webhooks[0].secret.includes('*'), 'the secret comes back masked');

      await withScreenshot(page, 'business-alert-test', async () => {
        await page.getByTestId('alert-test-webhook').click();
        await page.locator('.ant-message-notice', { hasText: /test sent|failed|nothing/i }).last().waitFor();
      });
      await eventually(() => received.length >= 1, { what: 'the test webhook at the receiver' });

      await withScreenshot(page, 'business-alerts-page', async () => {
        await page.goto(`${tollgate.url}/console/admin/alerts`);
        await page.getByRole('heading', { name: 'Alerts' }).waitFor();
        const delivered = rowWith(page, hookUrl);
        await delivered.first().waitFor();
        assert.equal((await delivered.first().getByTestId('alert-status').innerText()).trim(), 'Sent');
      });
    } finally {
      receiver.close();
    }
  });
});
