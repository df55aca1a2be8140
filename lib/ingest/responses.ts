// Response schemas of the ingest routes (services/ingest.service.ts), published in the OpenAPI
// document and typing the handlers. Tracker routes answer 202 without a body.
import { Type } from '@sinclair/typebox';
import { object, stringEnum } from '../openapi/responses.ts';

const ItemStatus = stringEnum(['accepted', 'filtered'], { description: 'filtered: a bot or an excluded visitor, not stored' });

const RejectedFields = Type.Optional(Type.Array(object({ field: Type.String(), message: Type.String(), type: Type.Optional(Type.String()) })));

export const ServerAccepted = object({ status: ItemStatus });

export const BatchAccepted = object({
  results: Type.Array(
    object({
      index: Type.Integer({ minimum: 0 }),
      status: stringEnum(['accepted', 'filtered', 'rejected']),
      code: Type.Optional(Type.String({ description: 'Why a rejected item was refused, as a single request’s error code' })),
      message: Type.Optional(Type.String()),
      fields: RejectedFields,
    }),
  ),
  accepted: Type.Integer({ minimum: 0 }),
  filtered: Type.Integer({ minimum: 0 }),
  rejected: Type.Integer({ minimum: 0 }),
});

export const AiFetchAccepted = object({ accepted: Type.Integer({ minimum: 1, maximum: 1, description: 'The fetch was stored' }) });

export const AiFetchBatchAccepted = object({
  accepted: Type.Integer({ minimum: 0, description: 'Fetches stored' }),
  rejected: Type.Integer({ minimum: 0, description: 'Fetches refused (see results)' }),
  results: Type.Array(
    object({
      index: Type.Integer({ minimum: 0 }),
      status: stringEnum(['accepted', 'rejected']),
      code: Type.Optional(Type.String({ description: 'Why a rejected fetch was refused, as a single request’s error code' })),
      message: Type.Optional(Type.String()),
      fields: RejectedFields,
    }),
  ),
});

/** One fetch's answer, or a batch's (`{items}`) with a result per item. */
export const AiFetchesAccepted = Type.Union([AiFetchAccepted, AiFetchBatchAccepted]);
