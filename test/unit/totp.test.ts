// TOTP checked against an independent RFC 6238 implementation written here with node:crypto (and
// its Appendix B test vectors), plus the recovery-code format and the secret box sealing seeds.
import { describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { newRecoveryCode, normaliseRecoveryCode } from '../../lib/auth/recovery-codes.ts';
import { createSecretBox } from '../../lib/auth/secret-box.ts';
import { matchTotp } from '../../lib/auth/totp.ts';

/** RFC 4226 HOTP with HMAC-SHA-1 and dynamic truncation. */
function hotp(key: Buffer, counter: number, digits: number): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', key).update(message).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const binary = ((mac[offset] & 0x7f) << 24) | (mac[offset + 1] << 16) | (mac[offset + 2] << 8) | mac[offset + 3];
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** RFC 6238 TOTP: T0 = 0, X = 30 s. */
const totp = (key: Buffer, unixSeconds: number, digits = 6) => hotp(key, Math.floor(unixSeconds / 30), digits);

const RFC_KEY = Buffer.from('12345678901234567890', 'ascii');
/** The same key in base32, as an authenticator app receives it. */
const RFC_KEY_BASE32 = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

describe('the reference RFC 6238 implementation of this test', () => {
  it.each([
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ])('gives the Appendix B SHA-1 value at T=%d', (time, expected) => {
    expect(totp(RFC_KEY, time, 8)).toBe(expected);
  });
});

describe('matchTotp', () => {
  it('accepts the six-digit RFC codes at their times and names their time step', async () => {
    expect(await matchTotp(RFC_KEY_BASE32, '287082', null, 59)).toBe(1);
    expect(await matchTotp(RFC_KEY_BASE32, '081804', null, 1111111109)).toBe(37037036);
    expect(await matchTotp(RFC_KEY_BASE32, '050471', null, 1111111111)).toBe(37037037);
    expect(await matchTotp(RFC_KEY_BASE32, '005924', null, 1234567890)).toBe(41152263);
    expect(await matchTotp(RFC_KEY_BASE32, '279037', null, 2000000000)).toBe(66666666);
    expect(await matchTotp(RFC_KEY_BASE32, '353130', null, 20000000000)).toBe(666666666);
  });

  it('agrees with the reference implementation now', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await matchTotp(RFC_KEY_BASE32, totp(RFC_KEY, now), null, now)).toBe(Math.floor(now / 30));
  });

  it('accepts a code one step early or late for clock drift, and refuses two steps', async () => {
    // 1111111109 lies in step 37037036 (1111111080 … 1111111109).
    expect(await matchTotp(RFC_KEY_BASE32, '081804', null, 1111111109 + 30)).toBe(37037036);
    expect(await matchTotp(RFC_KEY_BASE32, '081804', null, 1111111109 - 30)).toBe(37037036);
    expect(await matchTotp(RFC_KEY_BASE32, '081804', null, 1111111109 + 60)).toBeNull();
    expect(await matchTotp(RFC_KEY_BASE32, '081804', null, 1111111109 - 60)).toBeNull();
  });

  it('refuses a code whose step is not after the last accepted step', async () => {
    expect(await matchTotp(RFC_KEY_BASE32, '081804', 37037036, 1111111109)).toBeNull();
    expect(await matchTotp(RFC_KEY_BASE32, '081804', 37037037, 1111111109)).toBeNull();
    expect(await matchTotp(RFC_KEY_BASE32, '081804', 37037035, 1111111109)).toBe(37037036);
  });

  it('treats malformed input as a wrong code and ignores spaces', async () => {
    for (const code of ['', '08180', '0818045', 'abcdef', '08180x']) expect(await matchTotp(RFC_KEY_BASE32, code, null, 1111111109)).toBeNull();
    expect(await matchTotp(RFC_KEY_BASE32, '081 804', null, 1111111109)).toBe(37037036);
  });

  it('refuses the code of another secret', async () => {
    expect(await matchTotp('JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', '081804', null, 1111111109)).toBeNull();
  });
});

describe('recovery codes', () => {
  it('look like abcd-efgh-jk, without look-alike characters', () => {
    for (let i = 0; i < 200; i++) expect(newRecoveryCode()).toMatch(/^[a-hj-km-np-z2-9]{4}-[a-hj-km-np-z2-9]{4}-[a-hj-km-np-z2-9]{2}$/);
  });

  it('are compared without case, spaces or dashes', () => {
    expect(normaliseRecoveryCode(' ABCD-efgh jk ')).toBe('abcdefghjk');
  });
});

describe('secret box', () => {
  const box = createSecretBox(Buffer.from('a root secret of at least thirty-two bytes'), 'totp');

  it('opens what it sealed for the same owner, and the sealed text hides the secret', () => {
    const sealed = box.seal('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', 'user-1');
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('GEZDGNBVGY3TQOJQ');
    expect(box.open(sealed, 'user-1')).toBe('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
  });

  it('refuses a value moved to another owner, tampered with, or sealed for another purpose or key', () => {
    const sealed = box.seal('secret', 'user-1');
    expect(box.open(sealed, 'user-2')).toBeNull();
    const [version, iv, body] = sealed.split('.');
    const flipped = Buffer.from(body, 'base64url');
    flipped[0] ^= 1;
    expect(box.open(`${version}.${iv}.${flipped.toString('base64url')}`, 'user-1')).toBeNull();
    expect(createSecretBox(Buffer.from('a root secret of at least thirty-two bytes'), 'other').open(sealed, 'user-1')).toBeNull();
    expect(createSecretBox(Buffer.from('another root secret, also thirty-two bytes'), 'totp').open(sealed, 'user-1')).toBeNull();
    expect(box.open('not sealed', 'user-1')).toBeNull();
  });
});
