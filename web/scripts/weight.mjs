// Measures what the console costs a browser on first load, against the real binary (TOLLGATE_BIN, default
// ../tollgate) in Debian's Chromium: for the sign-in page and the signed-in dashboard, the bytes transferred
// (what went over the wire, headers included), the compressed and uncompressed bodies, and the number of
// files (all and JavaScript); then the time until the dashboard's first chart is drawn with the network
// throttled to 150 ms RTT and 1.6 Mbps (CDP Network.emulateNetworkConditions), caches off.
//
//   node scripts/weight.mjs            # prints a table and the JSON figures
//   WEIGHT_FILES=1 node scripts/weight.mjs   # and every file of both loads, largest first
//
// Root makes one call through a fake upstream first, so the dashboard has usage to chart.
import { apiAs, eventually, openBrowser, ROOT_PASSWORD, startTollgate } from '../e2e/harness.mjs';
import { FAKE_MODELS, startFakeUpstream } from '../e2e/fakeUpstream.mjs';

const MODEL = FAKE_MODELS[0];
const THROTTLE = { offline: false, latency: 150, downloadThroughput: (1.6e6 / 8) | 0, uploadThroughput: (1.6e6 / 8) | 0 };

/** Records every response of a page through CDP until stop(): transferred, body and JS bytes, files. */
async function recorder(context, page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  const reqs = new Map();
  cdp.on('Network.responseReceived', (e) => {
    const h = Object.fromEntries(Object.entries(e.response.headers).map(([k, v]) => [k.toLowerCase(), v]));
    reqs.set(e.requestId, {
      url: e.response.url,
      type: e.type,
      encoding: h['content-encoding'] ?? '',
      body: 0,
      decoded: 0,
      transferred: 0,
    });
  });
  cdp.on('Network.dataReceived', (e) => {
    const r = reqs.get(e.requestId);
    if (r) r.decoded += e.dataLength;
  });
  cdp.on('Network.loadingFinished', (e) => {
    const r = reqs.get(e.requestId);
    if (r) r.transferred = e.encodedDataLength;
  });
  return {
    cdp,
    reset: () => reqs.clear(),
    /** Every response, largest transfer first (WEIGHT_FILES=1 prints them). */
    files: () => [...reqs.values()].filter((r) => !r.url.startsWith('data:')).sort((a, b) => b.transferred - a.transferred),
    summary() {
      const rows = [...reqs.values()].filter((r) => !r.url.startsWith('data:'));
      const sum = (f, pick = () => true) => rows.filter(pick).reduce((n, r) => n + f(r), 0);
      const isJS = (r) => r.type === 'Script' || /\.js(\?|$)/.test(r.url);
      return {
        files: rows.length,
        js_files: rows.filter(isJS).length,
        transferred: sum((r) => r.transferred),
        js_transferred: sum((r) => r.transferred, isJS),
        uncompressed: sum((r) => r.decoded),
        js_uncompressed: sum((r) => r.decoded, isJS),
        encodings: [...new Set(rows.filter(isJS).map((r) => r.encoding || 'identity'))],
      };
    },
  };
}

async function main() {
  const upstream = await startFakeUpstream();
  const tollgate = await startTollgate({ log: 'weight-tollgate.log' });
  const browser = await openBrowser();
  try {
    const root = await apiAs(tollgate.url);
    await root('POST', '/api/admin/channels', {
      type: 'openai', name: 'fake', base_url: upstream.url, keys: ['sk-fake-upstream-key'], models: [MODEL],
      groups: ['default'], priority: 0, weight: 1,
    });
    await root('PUT', '/api/admin/pricing', [{ model: MODEL, input: '1', output: '2', cache_read: '0', cache_write: '0', per_call: '0' }]);
    const self = await root('GET', '/api/user/self');
    await root('POST', `/api/admin/users/${self.id}/quota`, { delta: 10_000_000, reason: 'weight' });
    const key = await root('POST', '/api/tokens', { name: 'weight' });
    await eventually(async () => {
      const res = await fetch(`${tollgate.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key.key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
      });
      return res.status === 200;
    }, { what: 'a relayed call' });
    await eventually(async () => (await root('GET', '/api/logs/stats')).totals.requests > 0, { what: 'the call in the stats' });

    // The binary's own answer for the entry script, as `curl -sI -H 'Accept-Encoding: br'` sees it.
    const html = await (await fetch(`${tollgate.url}/login`)).text();
    const entry = /src="(\/assets\/index-[^"]+\.js)"/.exec(html)?.[1];
    const head = await fetch(`${tollgate.url}${entry}`, { method: 'HEAD', headers: { 'Accept-Encoding': 'br' } });
    const served = ['content-encoding', 'content-type', 'content-length', 'vary', 'cache-control'].map((h) => `${h}: ${head.headers.get(h)}`);
    console.log(`HEAD ${entry} (Accept-Encoding: br) → ${head.status}; ${served.join('; ')}`);
    if (head.headers.get('content-encoding') !== 'br') throw new Error(`${entry} is not served as brotli`);

    const { context, page } = browser;
    const rec = await recorder(context, page);

    // 1. The sign-in page, cold.
    await page.goto(`${tollgate.url}/login`, { waitUntil: 'networkidle' });
    await page.locator('#login_username').waitFor();
    const signin = rec.summary();
    const signinFiles = rec.files();

    // 2. Sign in, then the dashboard loaded cold (caches off: what a first visit after sign-in costs).
    await page.locator('#login_username').fill('root');
    await page.locator('#login_password').fill(ROOT_PASSWORD);
    await page.locator('form[id="login"] button[type="submit"]').click();
    await page.waitForURL(/\/console/);
    // Let the client-side visit finish, so none of its late responses land in the cold load's figures.
    await page.locator('svg[role="img"]').first().waitFor();
    await page.waitForLoadState('networkidle');
    rec.reset();
    await page.goto(`${tollgate.url}/console`, { waitUntil: 'networkidle' });
    await page.locator('svg[role="img"]').first().waitFor();
    const dashboard = rec.summary();
    const dashboardFiles = rec.files();

    // 3. Time to the first chart, throttled: from navigation until a chart (an SVG with role="img") is on the page.
    await rec.cdp.send('Network.emulateNetworkConditions', THROTTLE);
    rec.reset();
    const t0 = Date.now();
    await page.goto(`${tollgate.url}/console`, { waitUntil: 'commit', timeout: 120_000 });
    await page.locator('svg[role="img"]').first().waitFor({ timeout: 120_000 });
    const firstChartMs = Date.now() - t0;
    await rec.cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });

    const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
    const out = { signin, dashboard, first_chart_ms_throttled: firstChartMs, throttle: '150 ms RTT, 1.6 Mbps' };
    console.log('| page | files (JS) | transferred | JS transferred | uncompressed | JS uncompressed | JS encoding |');
    console.log('|---|---|---|---|---|---|---|');
    for (const [name, s] of [['sign-in', signin], ['dashboard (signed in)', dashboard]]) {
      console.log(`| ${name} | ${s.files} (${s.js_files}) | ${kb(s.transferred)} | ${kb(s.js_transferred)} | ${kb(s.uncompressed)} | ${kb(s.js_uncompressed)} | ${s.encodings.join(', ')} |`);
    }
    if (process.env.WEIGHT_FILES) {
      for (const [name, files] of [['sign-in', signinFiles], ['dashboard (signed in)', dashboardFiles]]) {
        console.log(`\n${name}: file, transferred, uncompressed, encoding`);
        for (const f of files) console.log(`  ${new URL(f.url).pathname}  ${kb(f.transferred)}  ${kb(f.decoded)}  ${f.encoding || 'identity'}`);
      }
    }
    console.log(`first chart, throttled (150 ms RTT, 1.6 Mbps): ${(firstChartMs / 1000).toFixed(2)} s`);
    console.log(JSON.stringify(out));
  } finally {
    await browser.close();
    await tollgate.stop();
    await upstream.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
