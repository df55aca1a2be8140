// Encryption at rest for small secrets the server must read back (TOTP seeds): AES-256-GCM with a
// key derived by HKDF-SHA256 from the JWT secret, so a copied database alone does not yield them.
// The owner's id is bound as associated data, so a sealed value cannot be moved to another row.
// Rotating the JWT secret makes sealed values unreadable: those users re-enrol (an admin resets MFA).
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface SecretBox {
  /** `v1.<iv>.<ciphertext+tag>`, base64url parts. */
  seal(plain: string, boundTo: string): string;
  /** The plain text, or null when the value is not ours, was tampered with, or belongs elsewhere. */
  open(sealed: string, boundTo: string): string | null;
}

/** `purpose` separates keys: a box for one kind of secret cannot open another's values. */
export function createSecretBox(rootSecret: Uint8Array, purpose: string): SecretBox {
  // Derived on first use, so a service can be built before (or without) its secret being needed.
  let derived: Buffer | undefined;
  const key = () => {
    derived ??= Buffer.from(hkdfSync('sha256', rootSecret, Buffer.alloc(0), `plumb secret-box ${VERSION} ${purpose}`, 32));
    return derived;
  };
  return {
    seal(plain, boundTo) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key(), iv);
      cipher.setAAD(Buffer.from(boundTo, 'utf8'));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${VERSION}.${iv.toString('base64url')}.${body.toString('base64url')}`;
    },
    open(sealed, boundTo) {
      const [version, ivText, bodyText] = sealed.split('.');
      if (version !== VERSION || !ivText || !bodyText) return null;
      const iv = Buffer.from(ivText, 'base64url');
      const body = Buffer.from(bodyText, 'base64url');
      if (iv.length !== IV_BYTES || body.length < TAG_BYTES) return null;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key(), iv);
        decipher.setAAD(Buffer.from(boundTo, 'utf8'));
        decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
        return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        return null;
      }
    },
  };
}
