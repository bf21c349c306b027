// A plain SMTP server (RFC 5321, no TLS) for the browser tests: it accepts every message, records it, and
// decodes enough MIME (multipart, quoted-printable, base64, encoded-word subjects) to read a code or a link.
// The server under test is pointed at it with TLS mode "none".
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';

const MAX_LINE = 4096; // RFC 5321 limits a command line to 512 and a text line to 1000 octets; be lenient
const MAX_MESSAGE = 10 * 1024 * 1024;

/**
 * Starts the server on 127.0.0.1 and a free port. Answers {host, port, messages, waitFor, clear, close}:
 * `messages` is the list of received messages (see parseMessage) in arrival order.
 */
export function startFakeSmtp({ hostname = 'fake-smtp.test' } = {}) {
  const messages = [];
  const waiters = new Set();
  const sockets = new Set();

  function deliver(envelope, raw) {
    const msg = { id: randomUUID(), ...envelope, raw, ...parseMessage(raw) };
    messages.push(msg);
    for (const w of [...waiters]) {
      if (w.predicate(msg)) {
        waiters.delete(w);
        clearTimeout(w.timer);
        w.resolve(msg);
      }
    }
    return msg.id;
  }

  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    serveSession(socket, hostname, deliver);
  });

  return new Promise((resolveStart, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolveStart({
        host: '127.0.0.1',
        port,
        messages,
        /**
         * Resolves with the first message (already received or still to come) for which predicate is true;
         * rejects after timeoutMs listing what did arrive.
         */
        waitFor(predicate, timeoutMs = 15_000) {
          const found = messages.find(predicate);
          if (found) return Promise.resolve(found);
          return new Promise((resolveWait, rejectWait) => {
            const w = { predicate, resolve: resolveWait };
            w.timer = setTimeout(() => {
              waiters.delete(w);
              const seen = messages.map((m) => `${m.rcptTo.join(',')}: ${m.subject}`).join('; ') || 'none';
              rejectWait(new Error(`no matching e-mail within ${timeoutMs} ms (received: ${seen})`));
            }, timeoutMs);
            waiters.add(w);
          });
        },
        /** Forgets the messages received so far. */
        clear() {
          messages.length = 0;
        },
        close() {
          for (const w of waiters) {
            clearTimeout(w.timer);
            w.resolve(undefined);
          }
          waiters.clear();
          for (const s of sockets) s.destroy();
          return new Promise((r) => server.close(() => r()));
        },
      });
    });
  });
}

/** One SMTP session on socket: a state machine fed line by line (CRLF, bare LF tolerated). */
function serveSession(socket, hostname, deliver) {
  let greeted = false;
  let tx = null; // {mailFrom, rcptTo: []} during a transaction
  let data = null; // lines of the message while in DATA
  let dataBytes = 0;
  let auth = null; // {mech, step} while an AUTH exchange is in progress
  let buffer = Buffer.alloc(0);

  const reply = (text) => {
    if (!socket.destroyed) socket.write(`${text}\r\n`);
  };
  const multiline = (code, lines) =>
    lines.forEach((line, i) => reply(`${code}${i === lines.length - 1 ? ' ' : '-'}${line}`));

  reply(`220 ${hostname} ESMTP fake ready`);

  function onDataLine(line) {
    if (line === '.') {
      const raw = data.join('\r\n') + (data.length ? '\r\n' : '');
      const id = deliver({ mailFrom: tx.mailFrom, rcptTo: [...tx.rcptTo] }, raw);
      data = null;
      tx = null;
      reply(`250 2.0.0 OK queued as ${id}`);
      return;
    }
    // Dot-unstuffing: a leading dot was doubled by the client (RFC 5321 §4.5.2).
    const text = line.startsWith('.') ? line.slice(1) : line;
    dataBytes += text.length + 2;
    if (dataBytes <= MAX_MESSAGE) data.push(text);
  }

  function onAuthLine(line) {
    if (line === '*') {
      auth = null;
      reply('501 5.0.0 authentication cancelled');
      return;
    }
    if (auth.mech === 'LOGIN' && auth.step === 'user') {
      auth.step = 'pass';
      reply('334 UGFzc3dvcmQ6');
      return;
    }
    auth = null;
    reply('235 2.7.0 authentication successful');
  }

  function onCommand(line) {
    const match = /^([A-Za-z]+)(?:\s+(.*))?$/.exec(line);
    if (!match) {
      reply('500 5.5.2 syntax error');
      return;
    }
    const verb = match[1].toUpperCase();
    const arg = (match[2] ?? '').trim();
    switch (verb) {
      case 'EHLO':
        if (!arg) return reply('501 5.5.4 EHLO needs a domain');
        greeted = true;
        tx = null;
        return multiline(250, [`${hostname} greets ${arg}`, '8BITMIME', 'PIPELINING', 'AUTH PLAIN LOGIN', `SIZE ${MAX_MESSAGE}`]);
      case 'HELO':
        if (!arg) return reply('501 5.5.4 HELO needs a domain');
        greeted = true;
        tx = null;
        return reply(`250 ${hostname}`);
      case 'MAIL': {
        if (!greeted) return reply('503 5.5.1 send EHLO or HELO first');
        if (tx) return reply('503 5.5.1 nested MAIL command');
        const m = /^FROM:\s*<([^>]*)>(?:\s+.*)?$/i.exec(arg);
        if (!m) return reply('501 5.5.4 syntax: MAIL FROM:<address>');
        tx = { mailFrom: m[1], rcptTo: [] };
        return reply('250 2.1.0 OK');
      }
      case 'RCPT': {
        if (!tx) return reply('503 5.5.1 need MAIL before RCPT');
        const m = /^TO:\s*<([^>]+)>(?:\s+.*)?$/i.exec(arg);
        if (!m) return reply('501 5.5.4 syntax: RCPT TO:<address>');
        tx.rcptTo.push(m[1]);
        return reply('250 2.1.5 OK');
      }
      case 'DATA':
        if (arg) return reply('501 5.5.4 DATA takes no argument');
        if (!tx || tx.rcptTo.length === 0) return reply('503 5.5.1 need RCPT before DATA');
        data = [];
        dataBytes = 0;
        return reply('354 end data with <CR><LF>.<CR><LF>');
      case 'RSET':
        tx = null;
        return reply('250 2.0.0 OK');
      case 'NOOP':
        return reply('250 2.0.0 OK');
      case 'VRFY':
        return reply('252 2.1.5 cannot verify, will accept');
      case 'AUTH': {
        if (!greeted) return reply('503 5.5.1 send EHLO first');
        const [mech, initial] = arg.split(/\s+/);
        const m = (mech ?? '').toUpperCase();
        if (m === 'PLAIN') {
          if (initial) return reply('235 2.7.0 authentication successful');
          auth = { mech: m, step: 'pass' };
          return reply('334 ');
        }
        if (m === 'LOGIN') {
          auth = { mech: m, step: 'user' };
          return reply('334 VXNlcm5hbWU6');
        }
        return reply('504 5.5.4 unrecognized authentication type');
      }
      case 'STARTTLS':
        return reply('454 4.7.0 TLS not available');
      case 'QUIT':
        reply(`221 2.0.0 ${hostname} closing`);
        socket.end();
        return undefined;
      default:
        return reply('502 5.5.1 command not implemented');
    }
  }

  socket.on('data', (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      const nl = buffer.indexOf(0x0a);
      if (nl < 0) {
        if (buffer.length > MAX_LINE && !data) {
          reply('500 5.5.6 line too long');
          socket.end();
        }
        return;
      }
      let line = buffer.subarray(0, nl);
      buffer = buffer.subarray(nl + 1);
      if (line.length && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
      // Data lines stay binary-safe as latin1 until the message is parsed; commands are ASCII.
      const text = line.toString('latin1');
      if (data) onDataLine(text);
      else if (auth) onAuthLine(text);
      else onCommand(text);
      if (socket.destroyed) return;
    }
  });
}

/** Header name (lower case) → value, folded lines joined; repeated headers keep the first. */
function parseHeaders(block) {
  const headers = {};
  const unfolded = block.replace(/\r?\n[ \t]+/g, ' ');
  for (const line of unfolded.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!(name in headers)) headers[name] = line.slice(colon + 1).trim();
  }
  return headers;
}

function splitHeaderBody(raw) {
  const m = /\r?\n\r?\n/.exec(raw);
  if (!m) return { head: raw, body: '' };
  return { head: raw.slice(0, m.index), body: raw.slice(m.index + m[0].length) };
}

/** `text/plain; charset="UTF-8"` → {type: 'text/plain', params: {charset: 'UTF-8'}}. */
function parseContentType(value) {
  const [type, ...rest] = (value || 'text/plain').split(';');
  const params = {};
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
  }
  return { type: type.trim().toLowerCase(), params };
}

/** Bytes from a latin1 string (the wire form of the data lines). */
const bytesOf = (latin1) => Buffer.from(latin1, 'latin1');

/** Decodes quoted-printable (RFC 2045 §6.7) to bytes. */
export function decodeQuotedPrintable(latin1) {
  const soft = latin1.replace(/=\r?\n/g, '');
  const out = [];
  for (let i = 0; i < soft.length; i++) {
    const c = soft[i];
    if (c === '=' && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
      out.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      out.push(soft.charCodeAt(i) & 0xff);
    }
  }
  return Buffer.from(out);
}

function decodeBody(latin1, encoding, charset) {
  const enc = (encoding || '7bit').toLowerCase();
  let bytes;
  if (enc === 'base64') bytes = Buffer.from(latin1.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
  else if (enc === 'quoted-printable') bytes = decodeQuotedPrintable(latin1);
  else bytes = bytesOf(latin1);
  try {
    return new TextDecoder(charset || 'utf-8').decode(bytes);
  } catch {
    return bytes.toString('utf8');
  }
}

/** Decodes RFC 2047 encoded words (`=?UTF-8?B?...?=`, `=?UTF-8?Q?...?=`) in a header value. */
export function decodeEncodedWords(value) {
  const decoded = value.replace(/\?=\s+=\?/g, '?==?');
  return decoded.replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_, charset, enc, text) => {
    const bytes =
      enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64') : decodeQuotedPrintable(text.replace(/_/g, ' '));
    try {
      return new TextDecoder(charset).decode(bytes);
    } catch {
      return bytes.toString('utf8');
    }
  });
}

/** Leaf parts of a MIME entity as [{type, text}], multipart bodies walked recursively. */
function leafParts(head, body) {
  const headers = parseHeaders(head);
  const ct = parseContentType(headers['content-type']);
  if (ct.type.startsWith('multipart/') && ct.params.boundary) {
    const delimiter = `--${ct.params.boundary}`;
    const parts = [];
    const chunks = body.split(new RegExp(`\\r?\\n?${escapeRegExp(delimiter)}`));
    for (const chunk of chunks.slice(1)) {
      if (chunk.startsWith('--')) break; // the closing delimiter
      const part = splitHeaderBody(chunk.replace(/^[ \t]*\r?\n/, ''));
      parts.push(...leafParts(part.head, part.body));
    }
    return parts;
  }
  return [{ type: ct.type, text: decodeBody(body, headers['content-transfer-encoding'], ct.params.charset) }];
}

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Parses a raw message (as received after dot-unstuffing) into {headers, subject, from, to, text, html, parts}:
 * text is the first text/plain part, html the first text/html part, both decoded to strings.
 */
export function parseMessage(raw) {
  const { head, body } = splitHeaderBody(raw);
  const headers = parseHeaders(head);
  for (const name of ['subject', 'from', 'to']) if (headers[name]) headers[name] = decodeEncodedWords(headers[name]);
  const parts = leafParts(head, body);
  return {
    headers,
    subject: headers.subject ?? '',
    from: headers.from ?? '',
    to: headers.to ?? '',
    text: parts.find((p) => p.type === 'text/plain')?.text ?? '',
    html: parts.find((p) => p.type === 'text/html')?.text ?? '',
    parts,
  };
}

/** The 6-digit code in a message's plain text (or, failing that, its HTML); undefined when there is none. */
export function codeIn(msg) {
  for (const text of [msg.text, msg.html.replace(/<[^>]+>/g, ' ')]) {
    const m = /(?<![0-9])([0-9]{6})(?![0-9])/.exec(text);
    if (m) return m[1];
  }
  return undefined;
}

/** The http(s) links in a message's plain text and HTML, de-duplicated, in order. */
export function linksIn(msg) {
  const found = [];
  for (const text of [msg.text, msg.html.replace(/&amp;/g, '&')]) {
    for (const m of text.matchAll(/https?:\/\/[^\s"'<>]+/g)) if (!found.includes(m[0])) found.push(m[0]);
  }
  return found;
}
