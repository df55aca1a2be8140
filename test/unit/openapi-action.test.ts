// action() at run time: what it hands Moleculer must travel to other nodes whole.
import { describe, expect, it } from '@jest/globals';
import { Type } from '@sinclair/typebox';
import { Utils } from 'moleculer';
import { action } from '../../lib/openapi/action.ts';
import { DateTime, nullable, object } from '../../lib/openapi/responses.ts';

describe('action()', () => {
  it('shares no schema object between actions, so other nodes receive every response whole', () => {
    // The same constants twice, as services use them: Moleculer's node info drops repeated objects.
    const Entry = object({ created_at: DateTime, ended_at: nullable(DateTime) });
    const paging = { limit: { type: 'number', optional: true } };
    const tags = ['things'];
    const actions = {
      list: action({ rest: 'GET /api/things', params: paging, openapi: { summary: 'x', tags, response: Type.Array(Entry) }, handler: () => [] }),
      get: action({ rest: 'GET /api/things/:id', params: paging, openapi: { summary: 'y', tags, response: Entry }, handler: () => ({ created_at: 'a', ended_at: null }) }),
    };
    const sent = Utils.safetyObject(actions, {}) as typeof actions;
    const plain = (value: unknown) => JSON.parse(JSON.stringify(value));
    expect(sent.get.openapi).toEqual(plain(actions.get.openapi));
    expect(sent.get.params).toEqual(paging);
    expect(sent.get.openapi?.response).toEqual({
      type: 'object',
      additionalProperties: false,
      required: ['created_at', 'ended_at'],
      properties: { created_at: { type: 'string', format: 'date-time' }, ended_at: { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] } },
    });
  });

  it('keeps the handler and the TypeBox kinds of the declaration', () => {
    const handler = () => ({ id: 'a' });
    const declared = action({ rest: 'GET /api/x', openapi: { summary: 'x', response: object({ id: Type.String() }) }, handler });
    expect(declared.handler).toBe(handler);
    expect(Object.getOwnPropertySymbols(declared.openapi?.response ?? {}).length).toBeGreaterThan(0);
  });
});
