// What a delivery looks like on the wire (README: What a receiver gets): the envelope's exact
// bytes, the signature over `timestamp.body`, the headers (the backoff between attempts is the
// outbox's, lib/outbox/send-loop.ts, shared with mail). Pure functions, so the dispatcher and the
// tests share nothing but the documented format.
import { createHmac, randomBytes } from 'node:crypto';
import { BRAND_HEADER_PREFIX, WEBHOOK_API_VERSION, WEBHOOK_USER_AGENT } from '../brand.ts';

export const SIGNATURE_VERSION = 'v1';
/** 32 random bytes (256 bits) in base64url, behind a prefix that makes a leaked secret recognisable. */
const SECRET_PREFIX = 'whsec_';

export const HEADERS = {
  timestamp: `${BRAND_HEADER_PREFIX}Timestamp`,
  signature: `${BRAND_HEADER_PREFIX}Signature`,
  eventId: `${BRAND_HEADER_PREFIX}Event-ID`,
  deliveryId: `${BRAND_HEADER_PREFIX}Delivery-ID`,
} as const;

export const newSigningSecret = (): string => `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;

export interface Envelope {
  api_version: string;
  id: string;
  delivery_id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** The body of one delivery, serialised once: every attempt sends (and signs) these same bytes. */
export function envelopeBody(event: { id: string; type: string; createdAt: string; data: Record<string, unknown> }, deliveryId: string): string {
  const envelope: Envelope = { api_version: WEBHOOK_API_VERSION, id: event.id, delivery_id: deliveryId, type: event.type, created_at: event.createdAt, data: event.data };
  return JSON.stringify(envelope);
}

/** `v1=` + hex HMAC-SHA256 of `timestamp + "." + body`, keyed with the secret's UTF-8 bytes. */
export function signature(secret: string, timestamp: number, body: string): string {
  return `${SIGNATURE_VERSION}=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
}

/** The request headers of one attempt, signed now with the webhook's current secret. */
export function deliveryHeaders(secret: string, body: string, ids: { eventId: string; deliveryId: string }, timestamp: number): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': WEBHOOK_USER_AGENT,
    [HEADERS.timestamp]: String(timestamp),
    [HEADERS.signature]: signature(secret, timestamp, body),
    [HEADERS.eventId]: ids.eventId,
    [HEADERS.deliveryId]: ids.deliveryId,
  };
}
