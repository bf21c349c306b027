// The test helpers' own checks: TOTP against the RFC 6238 appendix B vectors, and the fake SMTP server over a
// real socket (EHLO, AUTH, pipelined commands, RSET, dot-unstuffing, quoted-printable and base64 parts).
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import { codeIn, linksIn, startFakeSmtp } from './fakeSmtp.mjs';
import { base32Decode, hotp, totp } from './totp.mjs';

describe('totp.mjs', () => {
  // RFC 6238 appendix B: 8 digits; the seed is the ASCII string repeated to the hash's key length.
  const seeds = {
    sha1: Buffer.from('12345678901234567890'),
    sha256: Buffer.from('12345678901234567890123456789012'),
    sha512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234'),
  };
  const vectors = [
    [59, '94287082', '46119246', '90693936'],
    [1111111109, '07081804', '68084774', '25091201'],
    [1111111111, '14050471', '67062674', '99943326'],
    [1234567890, '89005924', '91819424', '93441116'],
    [2000000000, '69279037', '90698825', '38618901'],
    [20000000000, '65353130', '77737706', '47863826'],
  ];

  test('matches the RFC 6238 test vectors (SHA-1, SHA-256, SHA-512)', () => {
    for (const [seconds, sha1, sha256, sha512] of vectors) {
      const time = seconds * 1000;
      assert.equal(totp(seeds.sha1, { time, digits: 8 }), sha1, `SHA-1 at T=${seconds}`);
      assert.equal(totp(seeds.sha256, { time, digits: 8, algorithm: 'sha256' }), sha256, `SHA-256 at T=${seconds}`);
      assert.equal(totp(seeds.sha512, { time, digits: 8, algorithm: 'sha512' }), sha512, `SHA-512 at T=${seconds}`);
    }
  });

  test('matches the RFC 4226 HOTP vectors and reads a base32 secret', () => {
    const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
    expected.forEach((code, counter) => assert.equal(hotp(seeds.sha1, counter), code, `HOTP counter ${counter}`));
    // The same seed as an authenticator app would be given it.
    assert.deepEqual(base32Decode('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'), seeds.sha1);
    assert.deepEqual(base32Decode('gezd gnbv gy3t qojq gezd gnbv gy3t qojq'), seeds.sha1);
    assert.equal(totp('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', { time: 59_000 }), '287082');
    assert.throws(() => base32Decode('ABC1'), /not base32/);
  });
});

/** A tiny SMTP client that sends each step and waits for its reply (or, for `pipeline`, several at once). */
async function smtpSession(port) {
  const socket = connect(port, '127.0.0.1');
  let buf = '';
  const pending = [];
  socket.setEncoding('latin1');
  socket.on('data', (chunk) => {
    buf += chunk;
    for (;;) {
      // A reply ends with a line "NNN " (space after the code); continuation lines are "NNN-".
      const m = /^(?:\d{3}-[^\n]*\n)*\d{3} [^\n]*\n/.exec(buf);
      if (!m || !pending.length) break;
      buf = buf.slice(m[0].length);
      pending.shift()(m[0]);
    }
  });
  const nextReply = () => new Promise((r) => pending.push(r));
  const greeting = await nextReply();
  return {
    greeting,
    async send(line) {
      const reply = nextReply();
      socket.write(`${line}\r\n`);
      return reply;
    },
    async pipeline(lines) {
      const replies = lines.map(() => nextReply());
      socket.write(lines.map((l) => `${l}\r\n`).join(''));
      return Promise.all(replies);
    },
    async raw(text, expectReply = true) {
      const reply = expectReply ? nextReply() : undefined;
      socket.write(text);
      return reply;
    },
    close: () => socket.destroy(),
  };
}

describe('fakeSmtp.mjs', () => {
  test('speaks SMTP: order of commands, RSET, NOOP, dot-unstuffing, MIME decoding, waitFor', async () => {
    const smtp = await startFakeSmtp();
    try {
      const s = await smtpSession(smtp.port);
      assert.match(s.greeting, /^220 /);
      assert.match(await s.send('MAIL FROM:<a@example.com>'), /^503 /, 'MAIL before EHLO is refused');
      const ehlo = await s.send('EHLO client.test');
      assert.match(ehlo, /^250-/);
      assert.match(ehlo, /AUTH PLAIN LOGIN/);
      assert.match(await s.send(`AUTH PLAIN ${Buffer.from('\0user\0pass').toString('base64')}`), /^235 /);
      assert.match(await s.send('RCPT TO:<b@example.com>'), /^503 /, 'RCPT before MAIL is refused');
      assert.match(await s.send('DATA'), /^503 /, 'DATA before RCPT is refused');
      assert.match(await s.send('NOOP'), /^250 /);

      // A transaction abandoned with RSET delivers nothing.
      assert.match(await s.send('MAIL FROM:<dropped@example.com>'), /^250 /);
      assert.match(await s.send('RSET'), /^250 /);
      assert.match(await s.send('RCPT TO:<b@example.com>'), /^503 /, 'RSET ended the transaction');

      const waiting = smtp.waitFor((m) => m.rcptTo.includes('user@example.com'), 5000);
      const replies = await s.pipeline(['MAIL FROM:<noreply@tollgate.test> BODY=8BITMIME', 'RCPT TO:<user@example.com>', 'DATA']);
      assert.deepEqual(replies.map((r) => r.slice(0, 3)), ['250', '250', '354']);
      const boundary = 'b0undary';
      const message = [
        'From: Tollgate <noreply@tollgate.test>',
        'To: user@example.com',
        `Subject: =?UTF-8?B?${Buffer.from('验证码 Your code').toString('base64')}?=`,
        'MIME-Version: 1.0',
        `Content-Type: multipart/alternative; boundary="${boundary}"`,
        '',
        `--${boundary}`,
        'Content-Type: text/plain; charset=UTF-8',
        'Content-Transfer-Encoding: quoted-printable',
        '',
        'Your code is 042917. =E9=AA=8C=E8=AF=81=E7=A0=81 valid for 15 minutes, see https://example.test/verify?=',
        'a=3D1&b=3D2',
        '..a line that began with a dot',
        `--${boundary}`,
        'Content-Type: text/html; charset=UTF-8',
        'Content-Transfer-Encoding: base64',
        '',
        Buffer.from('<p>Your code is <b>042917</b>, <a href="https://example.test/reset?token=abc&amp;x=1">reset</a></p>').toString('base64'),
        `--${boundary}--`,
        '.',
        '',
      ].join('\r\n');
      assert.match(await s.raw(message), /^250 /);
      const msg = await waiting;
      assert.equal(msg.mailFrom, 'noreply@tollgate.test');
      assert.deepEqual(msg.rcptTo, ['user@example.com']);
      assert.equal(msg.subject, '验证码 Your code');
      assert.match(msg.text, /验证码 valid for 15 minutes/);
      assert.match(msg.text, /^.a line that began with a dot$/m, 'the doubled dot was removed');
      assert.doesNotMatch(msg.text, /^\.\./m);
      assert.match(msg.html, /<b>042917<\/b>/);
      assert.equal(codeIn(msg), '042917');
      assert.deepEqual(linksIn(msg), ['https://example.test/verify?a=1&b=2', 'https://example.test/reset?token=abc&x=1']);

      assert.match(await s.send('QUIT'), /^221 /);
      s.close();
      assert.equal(smtp.messages.length, 1, 'only the completed transaction was recorded');
      await assert.rejects(smtp.waitFor((m) => m.rcptTo.includes('nobody@example.com'), 200), /no matching e-mail/);
    } finally {
      await smtp.close();
    }
  });
});
