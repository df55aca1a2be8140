import { describe, expect, it } from '@jest/globals';
import { buildOpenApiDocument, toOpenApiPath } from '../../lib/openapi/document.ts';
import { objectSchema, parseShorthand, ruleToJsonSchema } from '../../lib/openapi/schema.ts';

describe('ruleToJsonSchema', () => {
  it.each([
    ['string|min:1|max:120', { type: 'string', minLength: 1, maxLength: 120 }],
    ['uuid', { type: 'string', format: 'uuid' }],
    ['email', { type: 'string', format: 'email' }],
    ['url', { type: 'string', format: 'uri' }],
    ['number|integer|min:0|max:200', { type: 'integer', minimum: 0, maximum: 200 }],
    ['boolean|optional', { type: 'boolean' }],
  ])('converts the shorthand %s', (rule, expected) => {
    expect(ruleToJsonSchema(rule)).toEqual(expected);
  });

  it('converts enums, arrays, nested objects and records', () => {
    expect(ruleToJsonSchema({ type: 'enum', values: ['event', 'path'] })).toEqual({ type: 'string', enum: ['event', 'path'] });
    expect(ruleToJsonSchema({ type: 'enum', values: [1, 2] })).toEqual({ enum: [1, 2] });
    expect(ruleToJsonSchema({ type: 'array', items: 'string', min: 1, max: 8 })).toEqual({ type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 8 });
    expect(ruleToJsonSchema({ type: 'object', strict: true, props: { a: 'string', b: 'number|optional' } })).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'number' } },
      required: ['a'],
      additionalProperties: false,
    });
    expect(ruleToJsonSchema({ type: 'record', value: 'string' })).toEqual({ type: 'object', additionalProperties: { type: 'string' } });
  });

  it('marks nullable fields and keeps defaults', () => {
    expect(ruleToJsonSchema({ type: 'string', nullable: true, default: 'x' })).toEqual({ type: ['string', 'null'], default: 'x' });
  });
});

describe('parseShorthand', () => {
  it('reads flags and numbers', () => {
    expect(parseShorthand('number|integer|min:0|convert:true')).toEqual({ type: 'number', integer: true, min: 0, convert: true });
  });
});

describe('objectSchema', () => {
  it('treats fields with defaults as optional and $$strict as closed', () => {
    expect(objectSchema({ $$strict: true, name: 'string', limit: { type: 'number', default: 25 } } as never)).toEqual({
      type: 'object',
      properties: { name: { type: 'string' }, limit: { type: 'number', default: 25 } },
      required: ['name'],
      additionalProperties: false,
    });
  });
});

describe('buildOpenApiDocument', () => {
  it('turns :params into {params} and documents errors as { message, code, fields?, details? }', () => {
    expect(toOpenApiPath('/api/sites/:id/goals/:goalId')).toEqual({ path: '/api/sites/{id}/goals/{goalId}', names: ['id', 'goalId'] });
    const doc = buildOpenApiDocument([{ method: 'DELETE', path: '/api/sites/:id', action: { name: 'sites.remove', params: { id: 'uuid' } } }], 'http://x');
    const op = (doc.paths as Record<string, Record<string, Record<string, unknown>>>)['/api/sites/{id}'].delete;
    expect(op.operationId).toBe('sites.remove');
    expect(op.parameters).toEqual([{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }]);
    const error = (doc.components as { schemas: { Error: { required: string[]; properties: Record<string, unknown> } } }).schemas.Error;
    expect(error.required).toEqual(['message', 'code']);
    expect(Object.keys(error.properties)).toEqual(['message', 'code', 'fields', 'details']);
  });
});
