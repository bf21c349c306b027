// A fake Epay (易支付) gateway for the browser tests. It signs and checks exactly like a real one:
// sign = lowercase hex MD5 of the parameters other than sign, sign_type and empty values, sorted by name,
// joined as k=v&k=v, followed directly by the merchant key.
//
// GET|POST /submit.php  checks the merchant's signed request and serves a page with a "Pay" button;
// POST /pay             (the button) sends Tollgate a signed TRADE_SUCCESS notify to notify_url, then
//                       redirects the browser to return_url with the same signed parameters.
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

/** The Epay signature of params with key. */
export function epaySign(params, key) {
  const text = Object.keys(params)
    .filter((k) => k !== 'sign' && k !== 'sign_type' && params[k] !== undefined && params[k] !== null && String(params[k]) !== '')
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');
  return createHash('md5').update(text + key, 'utf8').digest('hex');
}

function readForm(req) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')))));
  });
}

const escape = (s) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

function page(res, status, title, body) {
  res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title></head><body>${body}</body></html>`);
}

/**
 * Starts the gateway for merchant pid/key. `notifyMethod` is how the notify is sent (GET like most Epay
 * sites, or POST). Answers {url, pid, key, submissions, notifications, close}.
 */
export function startFakeEpay({ pid = '1001', key = 'fake-epay-merchant-key', notifyMethod = 'GET' } = {}) {
  const submissions = [];
  const notifications = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://fake-epay');
    try {
      if (url.pathname.endsWith('/submit.php')) {
        const params = req.method === 'POST' ? await readForm(req) : Object.fromEntries(url.searchParams);
        submissions.push(params);
        const problems = [];
        if (params.pid !== pid) problems.push(`unknown pid ${params.pid}`);
        if (params.sign !== epaySign(params, key)) problems.push('bad sign');
        if ((params.sign_type ?? 'MD5').toUpperCase() !== 'MD5') problems.push(`sign_type ${params.sign_type}`);
        for (const k of ['type', 'out_trade_no', 'notify_url', 'return_url', 'name', 'money']) {
          if (!params[k]) problems.push(`missing ${k}`);
        }
        if (problems.length) {
          page(res, 400, 'Epay error', `<h1 id="epay-error">${escape(problems.join('; '))}</h1>`);
          return;
        }
        const hidden = Object.entries(params)
          .map(([k, v]) => `<input type="hidden" name="${escape(k)}" value="${escape(v)}">`)
          .join('');
        page(
          res,
          200,
          'Fake Epay',
          `<h1>Fake Epay</h1><p>Order <b id="epay-order">${escape(params.out_trade_no)}</b>: <b id="epay-money">${escape(params.money)}</b> via ${escape(params.type)} — ${escape(params.name)}</p>` +
            `<form method="post" action="pay">${hidden}<button id="epay-pay" type="submit">Pay</button></form>`,
        );
        return;
      }
      if (url.pathname.endsWith('/pay') && req.method === 'POST') {
        const order = await readForm(req);
        const notify = {
          pid,
          trade_no: `EP${Date.now()}${randomBytes(3).toString('hex')}`,
          out_trade_no: order.out_trade_no,
          type: order.type,
          name: order.name,
          money: order.money,
          trade_status: 'TRADE_SUCCESS',
        };
        notify.sign = epaySign(notify, key);
        notify.sign_type = 'MD5';
        const body = new URLSearchParams(notify).toString();
        const target = new URL(order.notify_url);
        let answer;
        if (notifyMethod === 'POST') {
          answer = await fetch(target, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body });
        } else {
          for (const [k, v] of Object.entries(notify)) target.searchParams.set(k, v);
          answer = await fetch(target);
        }
        const text = (await answer.text()).trim();
        notifications.push({ params: notify, status: answer.status, answer: text });
        if (text !== 'success') {
          page(res, 502, 'Epay notify failed', `<h1 id="epay-error">notify answered ${answer.status} ${escape(text)}</h1>`);
          return;
        }
        const back = new URL(order.return_url);
        for (const [k, v] of Object.entries(notify)) back.searchParams.set(k, v);
        res.writeHead(302, { Location: back.toString() });
        res.end();
        return;
      }
      res.writeHead(404);
      res.end('not found');
    } catch (err) {
      page(res, 500, 'Epay error', `<h1 id="epay-error">${escape(err.message)}</h1>`);
    }
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}/`,
        pid,
        key,
        submissions,
        notifications,
        close: () => new Promise((r) => server.close(() => r())),
      });
    });
  });
}
