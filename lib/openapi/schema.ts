// Converts fastest-validator rules (what actions declare as `params`) into JSON Schema 2020-12,
// the dialect of OpenAPI 3.1, so the published contract is derived from what the server enforces.

export type JsonSchema = Record<string, unknown>;
type Rule = string | Record<string, unknown> | Rule[];

/** Rule props of fastest-validator that have a direct JSON Schema counterpart, per type. */
const STRING_FORMATS: Record<string, string> = { email: 'email', url: 'uri', uuid: 'uuid', date: 'date-time' };

export interface FieldSchema {
  name: string;
  optional: boolean;
  schema: JsonSchema;
}

/** Parses the shorthand `"string|min:1|max:120|optional"` into a rule object. */
export function parseShorthand(rule: string): Record<string, unknown> {
  const [type, ...parts] = rule.split('|');
  const out: Record<string, unknown> = { type: type.trim() };
  for (const part of parts) {
    const [key, value] = part.split(':');
    if (value === undefined) out[key.trim()] = true;
    else if (value === 'true' || value === 'false') out[key.trim()] = value === 'true';
    else if (value !== '' && !Number.isNaN(Number(value))) out[key.trim()] = Number(value);
    else out[key.trim()] = value;
  }
  return out;
}

function normalise(rule: Rule): Record<string, unknown> {
  if (typeof rule === 'string') return parseShorthand(rule);
  if (Array.isArray(rule)) return { type: 'multi', rules: rule };
  return rule;
}

export function ruleToJsonSchema(input: Rule): JsonSchema {
  const rule = normalise(input);
  const type = String(rule.type ?? 'any');
  const schema: JsonSchema = {};
  switch (type) {
    case 'string':
    case 'email':
    case 'url':
    case 'uuid': {
      schema.type = 'string';
      if (STRING_FORMATS[type]) schema.format = STRING_FORMATS[type];
      if (typeof rule.min === 'number') schema.minLength = rule.min;
      if (typeof rule.max === 'number') schema.maxLength = rule.max;
      if (typeof rule.length === 'number') schema.minLength = schema.maxLength = rule.length;
      if (rule.pattern instanceof RegExp) schema.pattern = rule.pattern.source;
      else if (typeof rule.pattern === 'string') schema.pattern = rule.pattern;
      if (Array.isArray(rule.enum)) schema.enum = rule.enum;
      break;
    }
    case 'number': {
      schema.type = rule.integer ? 'integer' : 'number';
      if (typeof rule.min === 'number') schema.minimum = rule.min;
      if (typeof rule.max === 'number') schema.maximum = rule.max;
      break;
    }
    case 'boolean':
      schema.type = 'boolean';
      break;
    case 'date':
      schema.type = 'string';
      schema.format = 'date-time';
      break;
    case 'enum':
      if (Array.isArray(rule.values) && rule.values.every((value) => typeof value === 'string')) schema.type = 'string';
      schema.enum = rule.values;
      break;
    case 'equal':
      schema.const = rule.value;
      break;
    case 'array': {
      schema.type = 'array';
      if (rule.items !== undefined) schema.items = ruleToJsonSchema(rule.items as Rule);
      if (typeof rule.min === 'number') schema.minItems = rule.min;
      if (typeof rule.max === 'number') schema.maxItems = rule.max;
      break;
    }
    case 'object': {
      schema.type = 'object';
      const props = (rule.props ?? rule.properties) as Record<string, Rule> | undefined;
      if (props) Object.assign(schema, objectSchema(props));
      if (rule.strict === true || rule.strict === 'remove') schema.additionalProperties = false;
      break;
    }
    case 'record':
      schema.type = 'object';
      if (rule.value !== undefined) schema.additionalProperties = ruleToJsonSchema(rule.value as Rule);
      break;
    case 'multi':
      schema.oneOf = (rule.rules as Rule[]).map(ruleToJsonSchema);
      break;
    default:
      break;
  }
  if (typeof rule.description === 'string') schema.description = rule.description;
  if (rule.default !== undefined && typeof rule.default !== 'function') schema.default = rule.default;
  if (rule.nullable === true && typeof schema.type === 'string') schema.type = [schema.type, 'null'];
  return schema;
}

export function isOptional(input: Rule): boolean {
  const rule = normalise(input);
  return rule.optional === true || rule.default !== undefined;
}

/** The fields of a params schema (keys starting with `$$` are validator options, not fields). */
export function fieldsOf(params: Record<string, Rule> | undefined): FieldSchema[] {
  if (!params) return [];
  return Object.entries(params)
    .filter(([name]) => !name.startsWith('$$'))
    .map(([name, rule]) => ({ name, optional: isOptional(rule), schema: ruleToJsonSchema(rule) }));
}

export function objectSchema(params: Record<string, Rule>): JsonSchema {
  const fields = fieldsOf(params);
  const schema: JsonSchema = { type: 'object', properties: Object.fromEntries(fields.map((f) => [f.name, f.schema])) };
  const required = fields.filter((f) => !f.optional).map((f) => f.name);
  if (required.length > 0) schema.required = required;
  const strict = (params as Record<string, unknown>).$$strict;
  if (strict === true || strict === 'remove') schema.additionalProperties = false;
  return schema;
}
