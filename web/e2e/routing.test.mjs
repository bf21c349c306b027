// Browser tests of the routing console (issue 11): logical groups with ordered routes, tiers on users, and the
// breaker buttons of the channel health drawer, against the real binary (SQLite + memory) and a fake upstream.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFakeUpstream } from './fakeUpstream.mjs';
import { apiAs, eventually, openBrowser, ROOT_PASSWORD, routeExists, startTollgate, withScreenshot } from './harness.mjs';

const MODEL = 'gpt-4o-mini';
const suffix = Date.now().toString(36);
const GROUP = `gpt-shared-${suffix}`;
const TIER = `vip-${suffix}`;
const USERNAME = `tiered${suffix}`;
const CHANNEL_A = `asxs-line-${suffix}`;
const CHANNEL_B = `codex-line-${suffix}`;

let tollgate;
let upstream;
let root;
let browser;
let channelA;
let userId;
const pending = {};

before(async () => {
  upstream = await startFakeUpstream();
  tollgate = await startTollgate({ log: 'tollgate-routing.log' });
  root = await apiAs(tollgate.url);
  pending.groups = !(await routeExists(root, 'GET', '/api/admin/logical-groups'));
  pending.defaults = !(await routeExists(root, 'GET', '/api/admin/logical-groups/defaults'));
  pending.tiers = !(await routeExists(root, 'GET', '/api/admin/tiers'));
  pending.breaker = !(await routeExists(root, 'POST', '/api/admin/channels/0/breaker', { action: 'reset' }));
  const channel = (name) => ({
    type: 'openai',
    name,
    base_url: upstream.url,
    keys: ['sk-fake-one', 'sk-fake-two'],
    models: [MODEL],
    groups: ['default'],
    priority: 0,
    weight: 1,
  });
  channelA = await root('POST', '/api/admin/channels', channel(CHANNEL_A));
  await root('POST', '/api/admin/channels', channel(CHANNEL_B));
  const reg = await fetch(`${tollgate.url}/api/auth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: USERNAME, password: 'e2e-user-Passw0rd' }),
  });
  assert.ok(reg.ok, `register ${USERNAME}: ${reg.status} ${await reg.text()}`);
  const users = await root('GET', `/api/admin/users?q=${encodeURIComponent(USERNAME)}`);
  userId = users.items.find((u) => u.username === USERNAME)?.id;
  assert.ok(userId, 'root finds the new user');

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
});

function rowWith(page, text) {
  return page.locator('.ant-table-tbody tr.ant-table-row', { hasText: text });
}

/** Waits until no antd Select dropdown is showing (closing ones animate out first). */
async function noDropdown(page) {
  await eventually(async () => (await page.locator('.ant-select-dropdown:visible').count()) === 0, { what: 'dropdowns to close' });
}

/** Opens the antd Select `trigger` and picks `label` in its dropdown. */
async function pickOption(page, trigger, label, { close = false } = {}) {
  const option = page.locator('.ant-select-dropdown .ant-select-item-option:visible', { hasText: label }).first();
  // A click that lands while a dropdown animates in or out can miss: retry until the select shows the choice.
  await eventually(
    async () => {
      if ((await trigger.innerText()).includes(label)) return true;
      if (await page.locator('.ant-select-dropdown:visible').count()) await page.keyboard.press('Escape');
      await noDropdown(page);
      await trigger.click();
      await option.click({ timeout: 3_000 }).catch(() => undefined);
      return (await trigger.innerText()).includes(label);
    },
    { timeout: 20_000, what: `${label} chosen` },
  );
  if (close) {
    await page.keyboard.press('Escape');
    await noDropdown(page);
  }
}

async function routeNames(page) {
  return page.getByTestId('route-name').evaluateAll((inputs) => inputs.map((i) => i.value));
}

describe('admin: logical groups, tiers and breaker control', () => {
  test('creates a group with two routes, reorders them by drag, and the order survives a reload', async (t) => {
    if (pending.groups || pending.defaults) {
      t.skip('PENDING BACKEND: GET /api/admin/logical-groups or /api/admin/logical-groups/defaults answers route_not_found');
      return;
    }
    const { page } = browser;
    await withScreenshot(page, 'routing-group-create', async () => {
      await page.goto(`${tollgate.url}/console/admin/groups`);
      await page.getByRole('heading', { name: 'Logical groups' }).waitFor();
      await page.getByTestId('create-group').click();
      await page.locator('#lgroup-form_name').fill(GROUP);
      await page.locator('#lgroup-form_display_name').fill('GPT shared (e2e)');

      const rows = page.getByTestId('route-row');
      await page.getByTestId('no-routes').waitFor();
      await page.getByTestId('add-route').click();
      await rows.nth(0).getByTestId('route-name').fill('asxs');
      await pickOption(page, rows.nth(0).getByTestId('route-channels'), CHANNEL_A, { close: true });
      await page.getByTestId('add-route').click();
      await rows.nth(1).getByTestId('route-name').fill('codex2api');
      await pickOption(page, rows.nth(1).getByTestId('route-channels'), CHANNEL_B, { close: true });
      assert.deepEqual(await routeNames(page), ['asxs', 'codex2api']);

      // Drag the second route's handle onto the first route: codex2api goes on top.
      await page.getByTestId('route-drag').nth(1).dragTo(rows.nth(0));
      await eventually(async () => JSON.stringify(await routeNames(page)) === JSON.stringify(['codex2api', 'asxs']), {
        what: 'the dragged route on top',
      });
      assert.deepEqual(await page.getByTestId('route-priority').allInnerTexts(), ['20', '10']);

      await page.getByTestId('group-submit').click();
      await page.locator('.ant-message-success', { hasText: /saved/i }).last().waitFor();
      await rowWith(page, GROUP).waitFor();
    });

    const stored = await root('GET', `/api/admin/logical-groups/${GROUP}`);
    const byName = Object.fromEntries(stored.routes.map((r) => [r.name, r]));
    assert.ok(byName.codex2api.priority > byName.asxs.priority, `codex2api above asxs: ${JSON.stringify(stored.routes)}`);
    assert.deepEqual(byName.asxs.channels, [channelA.id]);

    await withScreenshot(page, 'routing-group-reload', async () => {
      await page.reload();
      const row = rowWith(page, GROUP);
      await row.waitFor();
      assert.equal((await row.getByTestId('group-routes-count').innerText()).trim(), '2');
      // The sticky-sessions view answers for the new group (no session has called it yet).
      await row.getByRole('button', { name: 'Sticky sessions' }).click();
      await eventually(async () => (await page.getByTestId('sticky-total').innerText()).trim() === '0', { what: 'the sticky total' });
      await page.keyboard.press('Escape');
      await page.locator('.ant-drawer-open').waitFor({ state: 'detached' });
      await row.getByRole('button', { name: /^edit$/i }).click();
      await eventually(async () => JSON.stringify(await routeNames(page)) === JSON.stringify(['codex2api', 'asxs']), {
        what: 'the saved order after a reload',
      });
      // The keyboard path: move asxs back up with its button, save, and the server has it on top again.
      await page.getByTestId('route-up').nth(1).click();
      assert.deepEqual(await routeNames(page), ['asxs', 'codex2api']);
      await page.getByTestId('group-submit').click();
      await page.locator('.ant-message-success', { hasText: /saved/i }).last().waitFor();
    });
    const again = await root('GET', `/api/admin/logical-groups/${GROUP}`);
    const order = [...again.routes].sort((a, b) => b.priority - a.priority).map((r) => r.name);
    assert.deepEqual(order, ['asxs', 'codex2api']);
  });

  test('creates a tier and sets it on a user', async (t) => {
    if (pending.tiers) {
      t.skip('PENDING BACKEND: GET /api/admin/tiers answers route_not_found');
      return;
    }
    const { page } = browser;
    await withScreenshot(page, 'routing-tier', async () => {
      await page.goto(`${tollgate.url}/console/admin/tiers`);
      await page.getByTestId('create-tier').click();
      await page.locator('#tier-form_name').fill(TIER);
      await page.locator('#tier-form_ratio').fill('0.8');
      await page.locator('#tier-form_description').fill('VIP (e2e)');
      await page.getByTestId('tier-submit').click();
      await rowWith(page, TIER).getByText('×0.8').waitFor();

      await page.goto(`${tollgate.url}/console/admin/users`);
      const row = rowWith(page, USERNAME);
      await row.waitFor();
      await row.getByRole('button', { name: /^edit$/i }).click();
      await pickOption(page, page.getByTestId('user-tier'), TIER);
      await page.locator('.ant-drawer-open').getByRole('button', { name: /^save$/i }).click();
      await page.locator('.ant-message-success', { hasText: /saved/i }).last().waitFor();
      await eventually(async () => (await row.getByTestId('user-tier-cell').innerText()).trim() === TIER, {
        what: 'the tier in the users table',
      });
    });
    const user = await root('GET', `/api/admin/users/${userId}`);
    assert.equal(user.tier, TIER);
    const tiers = await root('GET', '/api/admin/tiers');
    assert.equal(tiers.find((x) => x.name === TIER)?.users, 1);
  });

  test('forces a channel open from the health drawer and sees the state, then resets it', async (t) => {
    if (pending.breaker) {
      t.skip('PENDING BACKEND: POST /api/admin/channels/:id/breaker answers route_not_found');
      return;
    }
    const { page } = browser;
    await withScreenshot(page, 'routing-breaker', async () => {
      await page.goto(`${tollgate.url}/console/admin/channels`);
      await rowWith(page, CHANNEL_A).getByRole('button', { name: /^health$/i }).click();
      const drawer = page.locator('.ant-drawer-open');
      // Let the drawer finish sliding in, so the confirm pops up where it stays.
      await drawer.getByTestId('health-state').first().waitFor();
      await page.waitForLoadState('networkidle');
      await drawer.getByTestId('breaker-open-channel').click();
      const confirm = page.locator('.ant-popover:visible', { hasText: 'Force this channel open?' });
      await confirm.waitFor();
      assert.equal(await drawer.getByTestId('health-forced').count(), 0, 'nothing is forced before confirming');
      // A click that lands while the confirm is still zooming in can miss it: click again until the channel shows forced.
      await eventually(
        async () => {
          if (await drawer.getByTestId('health-forced').count()) return true;
          if (await confirm.count()) await confirm.getByRole('button', { name: 'Force open' }).click({ timeout: 3_000 }).catch(() => undefined);
          else await drawer.getByTestId('breaker-open-channel').click();
          return false;
        },
        { timeout: 20_000, interval: 1_000, what: 'the channel forced open' },
      );
      assert.equal((await drawer.getByTestId('health-state').first().innerText()).trim(), 'Tripped');
    });
    const forced = await root('GET', `/api/admin/channels/${channelA.id}/health`);
    assert.equal(forced.state, 'open');
    assert.equal(forced.forced, true);

    await withScreenshot(page, 'routing-breaker-reset', async () => {
      const drawer = page.locator('.ant-drawer-open');
      await drawer.getByTestId('breaker-reset-channel').click();
      await eventually(async () => (await drawer.getByTestId('health-forced').count()) === 0, { what: 'the forced mark to go' });
      assert.notEqual((await drawer.getByTestId('health-state').first().innerText()).trim(), 'Tripped');
    });
    const reset = await root('GET', `/api/admin/channels/${channelA.id}/health`);
    assert.notEqual(reset.state, 'open');
    assert.ok(!reset.forced);
  });

  test('a call through the group shows its group and route, and the admin sees the routing decision', async (t) => {
    if (pending.groups) {
      t.skip('PENDING BACKEND: GET /api/admin/logical-groups answers route_not_found');
      return;
    }
    const self = await root('GET', '/api/user/self');
    await root('POST', `/api/admin/users/${self.id}/quota`, { delta: 10_000_000, reason: 'e2e routing' });
    await root('PUT', '/api/admin/pricing', [{ model: MODEL, input: '1', output: '2', cache_read: '0', cache_write: '0', per_call: '0' }]);
    const token = await root('POST', '/api/tokens', { name: `routing-${suffix}`, group: GROUP });
    assert.equal(token.group, GROUP);
    await eventually(
      async () => {
        const res = await fetch(`${tollgate.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token.key}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
        });
        if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
        return true;
      },
      { timeout: 10_000, what: `a call through ${GROUP}` },
    );

    const { page } = browser;
    for (const [path, admin] of [
      ['/console/logs', false],
      ['/console/admin/logs', true],
    ]) {
      await withScreenshot(page, `routing-log-${admin ? 'admin' : 'user'}`, async () => {
        await page.goto(`${tollgate.url}${path}`);
        const row = rowWith(page, MODEL);
        await eventually(
          async () => {
            if (await row.count()) return true;
            await page.getByRole('button', { name: /refresh/i }).click();
            return false;
          },
          { timeout: 20_000, interval: 1000, what: 'the call in the usage logs' },
        );
        await row.first().click();
        await page.getByTestId('log-detail').waitFor();
        assert.equal((await page.getByTestId('log-group').innerText()).trim(), GROUP);
        // asxs is the top route again after the keyboard move, and its channel was reset after being forced open.
        assert.equal((await page.getByTestId('log-route').innerText()).trim(), 'asxs');
        if (admin) {
          await page.getByTestId('log-decision').waitFor();
          assert.match(await page.getByTestId('log-decision-chosen').innerText(), new RegExp(`${GROUP} / asxs · channel #${channelA.id}`));
          assert.ok((await page.getByTestId('candidate-outcome').allInnerTexts()).includes('Chosen'));
        } else {
          assert.equal(await page.getByTestId('log-decision').count(), 0, 'users do not see the routing decision');
        }
        await page.keyboard.press('Escape');
        await page.locator('.ant-drawer-open').waitFor({ state: 'detached' });
      });
    }
  });
});

describe('routing pages: no script errors', () => {
  test('nothing above threw in the page', () => {
    assert.deepEqual(browser.consoleErrors, []);
  });
});

describe('phone width: routing pages', () => {
  test('logical groups, their editor and tiers fit a 390 px screen', async () => {
    const phone = await openBrowser();
    const { page } = phone;
    try {
      await page.setViewportSize({ width: 390, height: 800 });
      await withScreenshot(page, 'routing-phone', async () => {
        await page.goto(`${tollgate.url}/login`);
        await page.locator('#login_username').fill('root');
        await page.locator('#login_password').fill(ROOT_PASSWORD);
        await page.locator('form[id="login"] button[type="submit"]').click();
        await page.waitForURL(/\/console/);
        const width = () => page.locator('body').evaluate((body) => body.scrollWidth);
        for (const path of ['/console/admin/groups', '/console/admin/tiers']) {
          await page.goto(`${tollgate.url}${path}`);
          await page.locator('h1').first().waitFor();
          assert.ok((await width()) <= 391, `${path} is ${await width()}px wide on a 390px screen`);
        }
        await page.goto(`${tollgate.url}/console/admin/groups`);
        await page.getByTestId('create-group').click();
        await page.getByTestId('add-route').click();
        await page.getByTestId('route-row').waitFor();
        assert.ok((await width()) <= 391, `the group editor is ${await width()}px wide on a 390px screen`);
      });
    } finally {
      await phone.close();
    }
  });
});
