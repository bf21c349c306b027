// A transparent recording reverse proxy: node tap.mjs LISTEN_PORT TARGET_URL LOG_FILE
// Forwards every request unchanged (streaming both ways, no buffering) and appends one JSON line per
// exchange to LOG_FILE: method, url, status, the request body and the start of the answer (credentials
// masked). run.sh puts one between each CLI and Tollgate and one between Tollgate and the fake upstream,
// so a failure report can show the exact request a client sent and what Tollgate made of it.
import { appendFileSync } from 'node:fs';
import http from 'node:http';

const [port, target, logFile] = process.argv.slice(2);
const up = new URL(target);
const MAX_REQ = 256 * 1024;
const MAX_RESP = 8 * 1024;
const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'x-goog-api-key', 'api-key']);

function mask(v) {
  const s = String(v);
  return s.length <= 12 ? '****' : `${s.slice(0, 10)}****${s.slice(-4)}`;
}

const server = http.createServer((req, res) => {
  const started = Date.now();
  const reqChunks = [];
  let reqLen = 0;
  const respChunks = [];
  let respLen = 0;
  const headers = {};
  for (const [k, v] of Object.entries(req.headers)) headers[k] = SECRET_HEADERS.has(k) ? mask(v) : v;
  const url = req.url.replace(/([?&]key=)[^&]*/, (_, p) => `${p}****`);
  const record = (extra) => {
    const line = {
      at: new Date(started).toISOString(),
      ms: Date.now() - started,
      method: req.method,
      url,
      headers,
      request: Buffer.concat(reqChunks).toString('utf8'),
      request_truncated: reqLen > MAX_REQ,
      ...extra,
      response: Buffer.concat(respChunks).toString('utf8'),
      response_truncated: respLen > MAX_RESP,
    };
    try {
      appendFileSync(logFile, `${JSON.stringify(line)}\n`);
    } catch {
      /* the run's temp dir may be gone at exit */
    }
  };
  const out = http.request(
    { host: up.hostname, port: up.port, method: req.method, path: req.url, headers: { ...req.headers, host: up.host } },
    (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.rawHeaders);
      res.flushHeaders();
      upRes.on('data', (d) => {
        if (respLen < MAX_RESP) respChunks.push(d.subarray(0, MAX_RESP - respLen));
        respLen += d.length;
        res.write(d);
      });
      upRes.on('end', () => {
        res.end();
        record({ status: upRes.statusCode });
      });
      upRes.on('error', (err) => {
        res.destroy(err);
        record({ status: upRes.statusCode, error: String(err) });
      });
    },
  );
  out.on('error', (err) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`tap: ${err}`);
    record({ status: 0, error: String(err) });
  });
  req.on('data', (d) => {
    if (reqLen < MAX_REQ) reqChunks.push(d.subarray(0, MAX_REQ - reqLen));
    reqLen += d.length;
    out.write(d);
  });
  req.on('end', () => out.end());
  req.on('aborted', () => out.destroy());
  res.on('close', () => {
    if (!res.writableFinished) out.destroy();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(port), '127.0.0.1');
for (const s of ['SIGTERM', 'SIGINT']) process.on(s, () => process.exit(0));
