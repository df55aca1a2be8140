// IPv4 addresses in dotted-quad text, read by hand: every tracker request behind a proxy carries its
// visitor's address in X-Forwarded-For, and the client address and the country lookup each judged
// it with several regular expressions (~4k instructions a request together) where one pass over
// its at most 15 characters answers.

/** An IPv4-mapped IPv6 address as text ("::ffff:203.0.113.7"), its IPv4 part captured. */
export const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * The address as an unsigned 32-bit number when `text` is exactly a dotted quad as `net.isIPv4`
 * accepts it (four decimal octets of 0–255, no leading zeros, nothing around them), else -1.
 */
export function ipv4Value(text: string): number {
  const length = text.length;
  if (length < 7 || length > 15) return -1;
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e) {
      if (digits === 0 || dots === 3) return -1;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else if (c >= 0x30 && c <= 0x39) {
      // A second digit after a leading 0 ("01") is not a dotted quad's.
      if (digits === 1 && octet === 0) return -1;
      octet = octet * 10 + (c - 0x30);
      digits++;
      if (octet > 255) return -1;
    } else return -1;
  }
  if (digits === 0 || dots !== 3) return -1;
  return value * 256 + octet;
}
