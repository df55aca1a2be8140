// Response schemas of the email report routes (services/email-reports.service.ts).
import { Type } from '@sinclair/typebox';
import { DateTime, nullable, object, page, stringEnum, Uuid } from '../openapi/responses.ts';
import { FREQUENCIES } from './period.ts';

export const Frequency = stringEnum(FREQUENCIES);

export const Subscription = object({
  site_id: Uuid,
  site_domain: Type.String(),
  frequency: Frequency,
  created_at: DateTime,
});

export const SubscriptionPage = page(Subscription);

export const Choice = object({ site_id: Uuid, frequency: stringEnum([...FREQUENCIES, 'off'] as const) });

export const TokenState = object({
  subscribed: Type.Boolean(),
  site_domain: nullable(Type.String()),
  frequency: nullable(Frequency),
});

export const Unsubscribed = object({ status: Type.Literal('unsubscribed') });
