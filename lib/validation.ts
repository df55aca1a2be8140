// The one parameter validator: fastest-validator as Moleculer runs it, with messages in plain words
// that name the field ("name must be at most 120 characters", "type must be one of: event, path")
// and never repeat the caller's value. The broker's validation middleware, the gateway's hot path
// and checks outside an action call (batch items, plugin settings) all use it, so a field's problem
// reads the same wherever it is found.
import { Validators } from 'moleculer';
import type { FieldError } from './errors.ts';

/** fastest-validator's message templates: `{field}` is the field's path, `{expected}` the rule's bound. */
export const PLAIN_MESSAGES: Record<string, string> = {
  required: '{field} is required',
  string: '{field} must be a string',
  stringEmpty: '{field} must not be empty',
  stringMin: '{field} must be at least {expected} characters',
  stringMax: '{field} must be at most {expected} characters',
  stringLength: '{field} must be exactly {expected} characters',
  stringPattern: '{field} is not in the expected format',
  stringContains: '{field} must contain "{expected}"',
  stringEnum: '{field} must be one of: {expected}',
  stringNumeric: '{field} must be a number written in digits',
  stringAlpha: '{field} must contain letters only',
  stringAlphanum: '{field} must contain letters and digits only',
  stringAlphadash: '{field} must contain letters, digits, dashes and underscores only',
  stringHex: '{field} must be a hexadecimal string',
  stringSingleLine: '{field} must be a single line',
  stringBase64: '{field} must be base64',
  number: '{field} must be a number',
  numberMin: '{field} must be at least {expected}',
  numberMax: '{field} must be at most {expected}',
  numberEqual: '{field} must be {expected}',
  numberNotEqual: '{field} must not be {expected}',
  numberInteger: '{field} must be a whole number',
  numberPositive: '{field} must be a positive number',
  numberNegative: '{field} must be a negative number',
  array: '{field} must be an array',
  arrayEmpty: '{field} must not be empty',
  arrayMin: '{field} must hold at least {expected} items',
  arrayMax: '{field} must hold at most {expected} items',
  arrayLength: '{field} must hold exactly {expected} items',
  arrayContains: '{field} must contain {expected}',
  arrayUnique: '{field} must not repeat a value',
  arrayEnum: '{field} items must be one of: {expected}',
  tuple: '{field} must be an array',
  tupleEmpty: '{field} must not be empty',
  tupleLength: '{field} must hold exactly {expected} items',
  boolean: '{field} must be true or false',
  currency: '{field} must be an amount of money',
  date: '{field} must be a date',
  dateMin: '{field} must not be before {expected}',
  dateMax: '{field} must not be after {expected}',
  enumValue: '{field} must be one of: {expected}',
  equalValue: '{field} must be {expected}',
  equalField: '{field} must equal {expected}',
  forbidden: '{field} must not be given',
  function: '{field} must be a function',
  email: '{field} must be an email address',
  emailEmpty: '{field} must not be empty',
  emailMin: '{field} must be at least {expected} characters',
  emailMax: '{field} must be at most {expected} characters',
  luhn: '{field} must be a valid card number',
  mac: '{field} must be a MAC address',
  object: '{field} must be an object',
  objectStrict: '{field} has fields it does not accept',
  objectMinProps: '{field} must hold at least {expected} properties',
  objectMaxProps: '{field} must hold at most {expected} properties',
  url: '{field} must be a URL',
  urlEmpty: '{field} must not be empty',
  uuid: '{field} must be a UUID',
  uuidVersion: '{field} must be a version {expected} UUID',
  classInstanceOf: '{field} must be an instance of {expected}',
  objectID: '{field} must be an ObjectID',
  record: '{field} must be an object',
};

/** A new validator with Plumb's messages (Moleculer's wrapper turns on the newer custom-check signature). */
export function createValidator(): InstanceType<typeof Validators.Fastest> {
  return new Validators.Fastest({ messages: PLAIN_MESSAGES } as ConstructorParameters<typeof Validators.Fastest>[0]);
}

/** An issue as fastest-validator reports it. */
export interface ValidatorIssue {
  type?: string;
  field?: string;
  message?: string;
  expected?: unknown;
  actual?: unknown;
}

/**
 * The validator's issues as the API names them: `{field, message, type}`, nothing of the caller's
 * value. An object's unknown keys (`$$strict`, `strict: true`) arrive as one issue listing them;
 * each becomes its own item named by its path, so every bad field is named once.
 */
export function fieldErrors(issues: readonly ValidatorIssue[]): FieldError[] {
  const fields: FieldError[] = [];
  for (const issue of issues) {
    const type = issue.type ?? 'invalid';
    if (type === 'objectStrict' && typeof issue.actual === 'string') {
      for (const key of issue.actual.split(', ')) {
        const field = issue.field ? `${issue.field}.${key}` : key;
        fields.push({ field, message: `${field} is not an accepted field`, type });
      }
      continue;
    }
    const field = issue.field ?? '';
    let message = issue.message ?? `${field} is invalid`;
    // "must be at least 1 characters" reads wrong; the templates cannot tell one from many.
    if (issue.expected === 1 && (type === 'stringMin' || type === 'emailMin')) message = `${field} must not be empty`;
    else if (issue.expected === 1) message = message.replace(/\b1 (item|character|propertie)s\b/, (_all, unit: string) => `1 ${unit === 'propertie' ? 'property' : unit}`);
    fields.push({ field, message, type });
  }
  return fields;
}

const validator = createValidator();

/** Returns a checker giving the field errors of a value (empty when valid). */
export function compileChecker(schema: Record<string, unknown>): (value: unknown) => FieldError[] {
  // fastest-validator's checker answers true or the list of issues (and converts values in place).
  const check = validator.compile(schema) as unknown as (value: unknown) => true | ValidatorIssue[];
  return (value) => {
    const result = check(value);
    return result === true ? [] : fieldErrors(result);
  };
}

/** RFC 3339 as API timestamps are written: date, `T`, time with seconds optional, a fraction, `Z` or an offset. */
const RFC3339 = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d)(?:\.\d{1,9})?)?(?:Z|([+-])(\d\d):(\d\d))$/i;

/**
 * The instant an RFC 3339 date-time names, or null when it is not one. JavaScript's parser alone
 * would roll 2030-02-30 over to 2 March and take 24:00; a typo must not become another date.
 */
export function parseDateTime(value: string): Date | null {
  const m = RFC3339.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number);
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCFullYear() !== year || calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) return null;
  if (hour > 23 || minute > 59 || second > 59 || (m[8] !== undefined && (Number(m[8]) > 23 || Number(m[9]) > 59))) return null;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? null : at;
}

/** An expiry given as `field`: an RFC 3339 date-time in the future, or a problem added to `problems`. */
export function checkExpiry(field: string, value: string, problems: FieldError[], now = Date.now()): Date | undefined {
  const at = parseDateTime(value);
  if (!at) problems.push({ field, message: `${field} must be an RFC 3339 date-time, e.g. 2030-01-31T12:00:00Z`, type: 'dateTime' });
  else if (at.getTime() <= now) problems.push({ field, message: `${field} must be in the future`, type: 'dateTimeFuture' });
  else return at;
  return undefined;
}
