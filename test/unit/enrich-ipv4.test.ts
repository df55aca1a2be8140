// ipv4Value: a dotted quad read by hand must accept exactly what node:net's isIPv4 accepts, since the
// client address and the country lookup take it in place of that check.
import { describe, expect, it } from '@jest/globals';
import { isIPv4 } from 'node:net';
import { ipv4Value } from '../../lib/ingest/enrich/ipv4.ts';

/** A deterministic generator, so a failure names an input that fails again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('ipv4Value', () => {
  it('reads a dotted quad as its unsigned 32-bit number', () => {
    expect(ipv4Value('0.0.0.0')).toBe(0);
    expect(ipv4Value('255.255.255.255')).toBe(2 ** 32 - 1);
    expect(ipv4Value('192.0.2.1')).toBe(0xc0000201);
    expect(ipv4Value('10.200.3.40')).toBe(((10 * 256 + 200) * 256 + 3) * 256 + 40);
    const next = random(7);
    for (let n = 0; n < 10_000; n++) {
      const octets = [0, 1, 2, 3].map(() => Math.floor(next() * 256));
      expect(ipv4Value(octets.join('.'))).toBe(octets.reduce((value, octet) => value * 256 + octet, 0));
    }
  });

  it('refuses what isIPv4 refuses: leading zeros, octets past 255, missing or extra parts, anything around the address', () => {
    for (const text of ['', '1.2.3', '1.2.3.4.5', '01.2.3.4', '1.2.3.04', '00.0.0.0', '256.1.1.1', '1.2.3.256', '999.1.1.1', '1234.1.1.1', ' 1.2.3.4', '1.2.3.4 ', '1.2.3.4\n', '1..2.3', '.1.2.3', '1.2.3.', '1.2.3.4.', '1.2.3.4:80', '::ffff:1.2.3.4', '0x1.2.3.4', '+1.2.3.4', '1.2.3.-4', '１.2.3.4', '1.2.3.4%eth0']) {
      expect(isIPv4(text)).toBe(false);
      expect(ipv4Value(text)).toBe(-1);
    }
  });

  it('agrees with isIPv4 on every dotted string tried, valid or nearly so', () => {
    const next = random(11);
    const pick = (text: string) => text[Math.floor(next() * text.length)];
    let valid = 0;
    for (let n = 0; n < 200_000; n++) {
      // Mostly four parts of one to three digits (leading zeros, octets past 255), at times three or
      // five parts, an empty or a four-digit one, or a stray character.
      const parts: string[] = [];
      for (let part = 0, count = next() < 0.9 ? 4 : next() < 0.5 ? 3 : 5; part < count; part++) {
        let digits = '';
        for (let i = next() < 0.05 ? Math.floor(next() * 2) * 4 : 1 + Math.floor(next() * 3); i > 0; i--) digits += pick('0123456789012');
        parts.push(digits);
      }
      let text = parts.join('.');
      if (next() < 0.1) {
        const at = Math.floor(next() * (text.length + 1));
        text = text.slice(0, at) + pick(' :x%+-\n') + text.slice(at);
      }
      if ((ipv4Value(text) !== -1) !== isIPv4(text)) throw new Error(`ipv4Value and isIPv4 disagree on ${JSON.stringify(text)}`);
      if (isIPv4(text)) valid++;
    }
    // The test means something only if both answers came up often.
    expect(valid).toBeGreaterThan(10_000);
    expect(valid).toBeLessThan(190_000);
  });
});
