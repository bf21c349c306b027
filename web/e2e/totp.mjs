// RFC 6238 TOTP (on RFC 4226 HOTP) for the browser tests: the test computes the code an authenticator app
// would show from the secret the console displays. Checked against the RFC's test vectors in totp.test.mjs.
import { createHmac } from 'node:crypto';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** Decodes RFC 4648 base32 (case-insensitive; spaces, dashes and '=' padding ignored) to bytes. */
export function base32Decode(text) {
  const clean = text.toUpperCase().replace(/[\s=-]/g, '');
  let bits = 0;
  let value = 0;
  const out = [];
  for (const ch of clean) {
    const idx = BASE32.indexOf(ch);
    if (idx < 0) throw new Error(`not base32: ${JSON.stringify(ch)} in ${JSON.stringify(text)}`);
    value = (value << 5) | idx;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((value >>> bits) & 0xff);
    }
  }
  return Buffer.from(out);
}

/** RFC 4226 HOTP: the dynamic truncation of HMAC(key, counter) as a zero-padded decimal string. */
export function hotp(key, counter, { digits = 6, algorithm = 'sha1' } = {}) {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(algorithm, key).update(msg).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const bin = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits;
  return String(bin).padStart(digits, '0');
}

/**
 * RFC 6238 TOTP for a base32 secret (or a Buffer key) at `time` (ms since the epoch, default now):
 * counter = floor(seconds / step).
 */
export function totp(secret, { time = Date.now(), step = 30, digits = 6, algorithm = 'sha1' } = {}) {
  const key = Buffer.isBuffer(secret) ? secret : base32Decode(secret);
  return hotp(key, Math.floor(time / 1000 / step), { digits, algorithm });
}

/** Milliseconds until the current 30-second step ends (to avoid typing a code that expires mid-request). */
export function msLeftInStep(time = Date.now(), step = 30) {
  return step * 1000 - (time % (step * 1000));
}
