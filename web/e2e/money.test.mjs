// Browser test of money in: an admin configures Epay on the payment settings page, a user tops up through a
// fake Epay gateway that signs like the real one, comes back to the return page and sees the order paid and
// the new balance; an admin creates a batch of redemption codes and exports it; the user redeems one.
// Run with `npm run e2e` (or `make test-e2e`); needs TOLLGATE_BIN built with the current web/dist.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { epaySign, startFakeEpay } from './fakeEpay.mjs';
import { apiAs, openBrowser, ROOT_PASSWORD, startTollgate, withScreenshot } from './harness.mjs';

const PASSWORD = 'e2e-money-Passw0rd';
let tollgate;
let epay;

before(async () => {
  epay = await startFakeEpay();
  tollgate = await startTollgate({ log: 'tollgate-money.log' });
});

after(async () => {
  await tollgate?.stop();
  await epay?.close();
});

async function signIn(page, username, password) {
  await page.goto(`${tollgate.url}/login`);
  await page.locator('#login_username').fill(username);
  await page.locator('#login_password').fill(password);
  await page.locator('form[id="login"] button[type="submit"]').click();
  await page.waitForURL(/\/console/);
}

async function signUp(username) {
  const res = await fetch(`${tollgate.url}/api/auth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password: PASSWORD }),
  });
  assert.equal(res.status, 201, `sign up ${username}: ${await res.text()}`);
}

const text = async (locator) => (await locator.innerText()).trim();

describe('money in', () => {
  const username = `payer${Date.now().toString(36)}`;
  let admin;
  let user;
  let codes = [];

  before(async () => {
    await signUp(username);
    admin = await openBrowser();
    user = await openBrowser();
    await signIn(admin.page, 'root', ROOT_PASSWORD);
    await signIn(user.page, username, PASSWORD);
  });

  after(async () => {
    await admin?.close();
    await user?.close();
  });

  test('the fake gateway signs like Epay', () => {
    // The documented example: sorted, empty values and sign/sign_type left out, key appended, MD5 lowercase hex.
    const params = { pid: '1001', type: 'alipay', out_trade_no: 'T1', money: '10.00', name: 'x', empty: '', sign_type: 'MD5' };
    assert.equal(epaySign(params, 'k'), epaySign({ money: '10.00', name: 'x', out_trade_no: 'T1', pid: '1001', type: 'alipay' }, 'k'));
    assert.match(epaySign(params, 'k'), /^[0-9a-f]{32}$/);
  });

  test('an admin sets up Epay on the payment settings page', async () => {
    const { page } = admin;
    await withScreenshot(page, 'money-payment-settings', async () => {
      await page.goto(`${tollgate.url}/console/admin/payment`);
      const enabled = page.locator('#payment-form_payment_epay_enabled');
      await enabled.waitFor();
      if ((await enabled.getAttribute('aria-checked')) !== 'true') await enabled.click();
      await page.locator('#payment-form_payment_epay_gateway_url').fill(epay.url);
      await page.locator('#payment-form_payment_epay_pid').fill(epay.pid);
      await page.locator('#payment-form_payment_epay_key').fill(epay.key);
      await page.locator('#payment-form_payment_epay_currency').fill('CNY');
      await page.locator('#payment-form_payment_epay_rate').fill('7.3');
      await page.locator('#payment-form_payment_epay_min_amount').fill('1');
      await page.locator('#payment-form_payment_epay_max_amount').fill('1000');
      await page.locator('#payment-form_invite_inviter_reward_amount').fill('1');
      await page.locator('#payment-form_invite_invitee_reward_amount').fill('0.5');
      const presets = page.locator('#payment-form_payment_presets');
      for (const preset of ['10', '50']) {
        await presets.fill(preset);
        await presets.press('Enter');
      }
      await page.getByTestId('payment-save').click();
      await page.locator('.ant-message-success', { hasText: /saved/i }).last().waitFor();
    });
    const root = await apiAs(tollgate.url);
    const settings = await root('GET', '/api/admin/settings');
    assert.equal(settings.payment.epay.enabled, true);
    assert.equal(settings.payment.epay.gateway_url, epay.url);
    assert.notEqual(settings.payment.epay.key, epay.key, 'the merchant key comes back masked');
    assert.deepEqual([settings.invite.inviter_reward, settings.invite.invitee_reward], [1_000_000, 500_000]);
    // Saving again with the masked key keeps the stored one: the top-up below only works if it does.
    await savePaymentAgain(admin.page);
  });

  test('a user tops up through Epay, comes back and sees the order paid and the new balance', async () => {
    const { page } = user;
    await withScreenshot(page, 'money-topup', async () => {
      await page.goto(`${tollgate.url}/console/wallet`);
      await page.getByTestId('preset-10').click();
      // 10.00 CNY at 7.3 CNY per USD buys 1,369,863 units: shown exactly, before paying.
      assert.equal(await text(page.getByTestId('topup-quote-total')), '$1.369863');
      await page.getByTestId('topup-pay').click();
      await page.waitForURL((url) => url.href.startsWith(epay.url));
      assert.equal(await text(page.locator('#epay-money')), '10.00');
      await page.locator('#epay-pay').click();
      await page.waitForURL(/\/console\/wallet\/return/);
      await page.getByTestId('return-title').filter({ hasText: /^Paid/ }).waitFor();
      await page.getByTestId('return-balance').filter({ hasText: '$1.369863' }).waitFor();
    });
    assert.equal(epay.notifications.length, 1);
    assert.equal(epay.notifications[0].answer, 'success');
    await withScreenshot(page, 'money-wallet-after-topup', async () => {
      await page.getByRole('button', { name: /back to wallet/i }).click();
      await page.waitForURL(/\/console\/wallet$/);
      await page.getByTestId('wallet-balance').filter({ hasText: '$1.369863' }).waitFor();
      const row = page.locator('.ant-table-tbody tr.ant-table-row', { hasText: epay.notifications[0].params.out_trade_no });
      await row.getByTestId('order-status').filter({ hasText: 'Paid' }).waitFor();
    });
    // The same notify again credits nothing and still answers success.
    const again = new URL(`${tollgate.url}/api/payment/epay/notify`);
    for (const [k, v] of Object.entries(epay.notifications[0].params)) again.searchParams.set(k, v);
    const res = await fetch(again);
    assert.equal((await res.text()).trim(), 'success');
    const self = await (await apiAs(tollgate.url, username, PASSWORD))('GET', '/api/user/self');
    assert.equal(self.quota, 1_369_863);
  });

  test('an admin creates a batch of 100 codes, copies them and exports a CSV of 101 lines', async () => {
    const { page } = admin;
    await withScreenshot(page, 'money-codes', async () => {
      await page.goto(`${tollgate.url}/console/admin/redemptions`);
      await page.getByTestId('create-batch').click();
      await page.locator('#batch-form_name').fill('e2e batch');
      await page.locator('#batch-form_count').fill('100');
      await page.locator('#batch-form_quota_amount').fill('2');
      await page.getByTestId('batch-submit').click();
      const box = page.getByTestId('batch-codes');
      await box.waitFor();
      codes = (await box.inputValue()).split('\n').filter(Boolean);
      assert.equal(codes.length, 100);
      assert.equal(new Set(codes).size, 100);
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('batch-export').click()]);
      const csv = await readFile(await download.path(), 'utf8');
      const lines = csv.split(/\r?\n/).filter((line) => line !== '');
      assert.equal(lines.length, 101, 'a header line and one line per code');
      for (const code of codes.slice(0, 3)) assert.ok(csv.includes(code), 'the export has the codes in clear');
      await page.getByRole('button', { name: /^done$/i }).click();
      await page.locator('.ant-table-tbody tr.ant-table-row').first().waitFor();
    });
  });

  test('the user redeems a code once', async () => {
    assert.ok(codes.length > 0, 'the batch test made no codes');
    const { page } = user;
    await withScreenshot(page, 'money-redeem', async () => {
      await page.goto(`${tollgate.url}/console/wallet`);
      const field = page.locator('#redeem_code');
      // Whitespace around a pasted code does not matter.
      await field.fill(`  ${codes[0]} `);
      await page.getByTestId('redeem-submit').click();
      await page.locator('.ant-message-success', { hasText: '$2.00' }).last().waitFor();
      await page.getByTestId('wallet-balance').filter({ hasText: '$3.369863' }).waitFor();
      await field.fill(codes[0]);
      await page.getByTestId('redeem-submit').click();
      await page.locator('#redeem .ant-form-item-explain-error').waitFor();
    });
  });
});

describe('invites', () => {
  test('a friend signs up through the invite link; both get the reward and the wallet counts it', async () => {
    const root = await apiAs(tollgate.url);
    await root('PUT', '/api/admin/settings', { invite: { inviter_reward: 1_000_000, invitee_reward: 500_000, first_topup_percent: '0' } });
    const inviter = `inviter${Date.now().toString(36)}`;
    const friend = `friend${Date.now().toString(36)}`;
    await signUp(inviter);
    const a = await openBrowser();
    const b = await openBrowser();
    try {
      const link = await withScreenshot(a.page, 'invite-link', async () => {
        await signIn(a.page, inviter, PASSWORD);
        await a.page.goto(`${tollgate.url}/console/wallet`);
        const input = a.page.getByTestId('invite-link');
        await input.waitFor();
        const value = await input.inputValue();
        assert.match(value, new RegExp(`^${tollgate.url}/register\\?aff=[A-Z0-9]+$`));
        return value;
      });
      await withScreenshot(b.page, 'invite-signup', async () => {
        await b.page.goto(link);
        await b.page.getByTestId('invited-by').waitFor();
        await b.page.locator('#register_username').fill(friend);
        await b.page.locator('#register_password').fill(PASSWORD);
        await b.page.locator('#register_confirm').fill(PASSWORD);
        await b.page.locator('form[id="register"] button[type="submit"]').click();
        await b.page.waitForURL(/\/console$/);
        await b.page.goto(`${tollgate.url}/console/wallet`);
        await b.page.getByTestId('wallet-balance').filter({ hasText: '$0.50' }).waitFor();
      });
      await withScreenshot(a.page, 'invite-counted', async () => {
        await a.page.reload();
        await a.page.getByTestId('wallet-balance').filter({ hasText: '$1.00' }).waitFor();
        await a.page.getByTestId('invite-count').locator('.ant-statistic-content').filter({ hasText: /^1$/ }).waitFor();
        await a.page.getByTestId('invite-rewards').filter({ hasText: '$1.00' }).waitFor();
      });
    } finally {
      await a.close();
      await b.close();
    }
  });
});

/** Saves the payment page once more without touching the masked key (it must keep the stored key). */
async function savePaymentAgain(page) {
  await page.reload();
  await page.locator('#payment-form_payment_epay_min_amount').fill('1.00');
  await page.getByTestId('payment-save').click();
  await page.locator('.ant-message-success', { hasText: /saved/i }).last().waitFor();
}
