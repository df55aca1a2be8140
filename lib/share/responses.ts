// Response schemas of the share-link routes (services/share.service.ts), published in the OpenAPI
// document and typing the handlers. A link's reads answer with their site endpoint's own schema.
import { Type } from '@sinclair/typebox';
import { DateTime, nullable, object, page, Uuid } from '../openapi/responses.ts';

const ShareFields = { id: Uuid, name: nullable(Type.String()), expires_at: nullable(DateTime), has_password: Type.Boolean(),
  embed_origins: Type.Array(Type.String(), { description: 'Origins allowed to frame the link’s page (its frame-ancestors); empty: no site may' }),
  created_at: DateTime,
};

export const ShareLink = object(ShareFields, { description: 'A share link; its token is never shown again' });

export const SharePage = page(ShareLink);

export const CreatedShare = object({
  share: object({ ...ShareFields, url: Type.String({ format: 'uri', description: 'The link to hand out, token included' }) }),
  token: Type.String({ description: 'The secret part of the link, shown only in this answer' }),
});

export const SharedSite = object({
  site: object({ id: Uuid, domain: Type.String(), timezone: Type.String() }),
  name: nullable(Type.String()),
  has_password: Type.Boolean(),
});
