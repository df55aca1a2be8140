// A WebAuthn authenticator in software, for tests: ECDSA P-256 keys from node:crypto, 'none'
// attestation encoded in CBOR, discoverable credentials (it remembers the user handle), and a
// signature counter the test can rewind to play a cloned or replayed authenticator. It builds
// exactly the bytes a browser would send (RegistrationResponseJSON / AuthenticationResponseJSON).
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

// --- CBOR (RFC 8949): just the types attestation objects and COSE keys need. ---
type Cbor = number | string | Uint8Array | Cbor[] | Map<Cbor, Cbor> | { [key: string]: Cbor };

function head(major: number, value: number): Buffer {
  if (value < 24) return Buffer.from([(major << 5) | value]);
  if (value < 0x100) return Buffer.from([(major << 5) | 24, value]);
  if (value < 0x10000) return Buffer.from([(major << 5) | 25, value >> 8, value & 0xff]);
  const out = Buffer.alloc(5);
  out[0] = (major << 5) | 26;
  out.writeUInt32BE(value, 1);
  return out;
}

export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new Error('cbor: only integers');
    return value >= 0 ? head(0, value) : head(1, -1 - value);
  }
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cbor)]);
  const entries: [Cbor, Cbor][] = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

// --- The authenticator. ---
const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;
/** This software authenticator's AAGUID (all zero is what 'none' attestation usually reports). */
const AAGUID = Buffer.alloc(16);

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();
const b64url = (data: Buffer | Uint8Array) => Buffer.from(data).toString('base64url');

interface Credential {
  id: Buffer;
  privateKey: KeyObject;
  rpId: string;
  userHandle: string;
  counter: number;
}

export interface CreationOptions {
  challenge: string;
  rp: { id?: string; name: string };
  user: { id: string; name: string };
  excludeCredentials?: { id: string }[];
}

export interface RequestOptions {
  challenge: string;
  rpId?: string;
  allowCredentials?: { id: string }[];
}

export interface SoftwareAuthenticatorOptions {
  /** The page's origin the "browser" reports in clientDataJSON. */
  origin: string;
  /** Whether the authenticator verifies its user (PIN, biometrics): sets the UV flag. */
  userVerification?: boolean;
}

export class SoftwareAuthenticator {
  readonly origin: string;
  userVerification: boolean;
  readonly credentials = new Map<string, Credential>();

  constructor(options: SoftwareAuthenticatorOptions) {
    this.origin = options.origin;
    this.userVerification = options.userVerification ?? true;
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string) {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }), 'utf8');
  }

  private flags(extra = 0) {
    return FLAG_UP | (this.userVerification ? FLAG_UV : 0) | extra;
  }

  /** navigator.credentials.create(): a new resident credential, as RegistrationResponseJSON. */
  register(options: CreationOptions, overrides: { origin?: string } = {}) {
    const rpId = options.rp.id ?? new URL(this.origin).hostname;
    const excluded = new Set((options.excludeCredentials ?? []).map((c) => c.id));
    for (const id of this.credentials.keys()) if (excluded.has(id)) throw new Error('InvalidStateError: this authenticator already holds a credential for the account');
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    // COSE_Key EC2: kty 2, alg -7 (ES256), crv 1 (P-256), x, y.
    const coseKey = cbor(
      new Map<Cbor, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const id = randomBytes(32);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const counter = Buffer.alloc(4);
    const authData = Buffer.concat([sha256(rpId), Buffer.from([this.flags(FLAG_AT)]), counter, AAGUID, idLength, id, coseKey]);
    const attestationObject = cbor({ fmt: 'none', attStmt: {}, authData });
    const clientDataJSON = this.clientData('webauthn.create', options.challenge, overrides.origin ?? this.origin);
    this.credentials.set(b64url(id), { id, privateKey, rpId, userHandle: options.user.id, counter: 0 });
    return {
      id: b64url(id),
      rawId: b64url(id),
      type: 'public-key' as const,
      response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }

  /**
   * navigator.credentials.get(): an assertion signed with the credential's key, as
   * AuthenticationResponseJSON. `counter` forces the signature counter (to replay an old one).
   */
  assert(options: RequestOptions, overrides: { credentialId?: string; counter?: number; origin?: string } = {}) {
    const rpId = options.rpId ?? new URL(this.origin).hostname;
    const allowed = (options.allowCredentials ?? []).map((c) => c.id);
    const chosen =
      overrides.credentialId ?? [...this.credentials.entries()].find(([id, c]) => c.rpId === rpId && (allowed.length === 0 || allowed.includes(id)))?.[0];
    const credential = chosen ? this.credentials.get(chosen) : undefined;
    if (!credential) throw new Error('NotAllowedError: no credential for this relying party');
    credential.counter = overrides.counter ?? credential.counter + 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(credential.counter);
    const authenticatorData = Buffer.concat([sha256(rpId), Buffer.from([this.flags()]), counter]);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, overrides.origin ?? this.origin);
    // ECDSA over authenticatorData ‖ SHA-256(clientDataJSON), DER-encoded as WebAuthn expects.
    const signature = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), credential.privateKey);
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authenticatorData),
        signature: b64url(signature),
        userHandle: credential.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }
}
