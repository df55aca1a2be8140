// How the dashboard words a field's problem the server named (400 validation_failed, fields[]):
// under the field without its name, elsewhere with it, never with the name twice.
import { describe, expect, it } from '@jest/globals';
import { ApiError, fieldMessage, namedMessage, problem } from '../../web/src/api.ts';

describe('field messages', () => {
  it('drops the field name the server put first when the message sits under its field', () => {
    expect(fieldMessage('steps[1].path_pattern', "steps[1].path_pattern must start with '/'")).toBe("must start with '/'");
    expect(fieldMessage('name', 'must not be blank')).toBe('must not be blank');
  });

  it('names the field once when the message stands apart from it', () => {
    expect(namedMessage('timezone', 'timezone must be an IANA time zone')).toBe('timezone must be an IANA time zone');
    expect(namedMessage('timezone', 'must be an IANA time zone')).toBe('timezone must be an IANA time zone');
  });

  it('says a failed call with every field, each named once', () => {
    const err = new ApiError(400, 'validation_failed', 'Invalid request', [
      { field: 'domain', message: 'domain must be a domain name' },
      { field: 'timezone', message: 'must be an IANA time zone' },
    ]);
    expect(problem(err)).toBe('Invalid request: domain must be a domain name; timezone must be an IANA time zone');
  });
});
