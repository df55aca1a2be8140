// The stats API's filter parser: `filter=dimension:op:value`, repeatable; what each operator
// accepts, values with colons and pipes, and one 400 naming every malformed filter.
import { describe, expect, it } from '@jest/globals';
import { FILTER_DIMENSIONS, parseFilter, parseFilters, wildcardToLike } from '../../lib/analytics/query/filters.ts';
import { PlumbError } from '../../lib/errors.ts';

/** The PlumbError a call throws (fails the test when it throws nothing). */
function thrown(fn: () => unknown): PlumbError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(PlumbError);
    return err as PlumbError;
  }
  throw new Error('expected an error');
}

describe('parseFilter', () => {
  it.each([
    ['page:is:/pricing', { dimension: 'page', op: 'is', values: ['/pricing'] }],
    ['country:is_not:DE', { dimension: 'country', op: 'is_not', values: ['DE'] }],
    ['referrer:contains:google', { dimension: 'referrer', op: 'contains', values: ['google'] }],
    ['page:matches:/blog/*', { dimension: 'page', op: 'matches', values: ['/blog/*'] }],
  ])('reads %s', (text, expected) => {
    expect(parseFilter(text)).toEqual(expected);
  });

  it('accepts every dimension of the API', () => {
    expect(FILTER_DIMENSIONS).toEqual([
      'page', 'entry_page', 'exit_page', 'hostname', 'source', 'channel', 'referrer',
      'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content',
      'country', 'region', 'browser', 'os', 'device',
    ]);
    for (const dimension of FILTER_DIMENSIONS) expect(parseFilter(`${dimension}:is:x`)).toEqual({ dimension, op: 'is', values: ['x'] });
  });

  it('splits is and is_not values on |, dropping repeats', () => {
    expect(parseFilter('page:is:/a|/b|/a')).toEqual({ dimension: 'page', op: 'is', values: ['/a', '/b'] });
    expect(parseFilter('device:is_not:Mobile|Tablet')).toEqual({ dimension: 'device', op: 'is_not', values: ['Mobile', 'Tablet'] });
  });

  it('keeps | as text in contains and matches values', () => {
    expect(parseFilter('page:contains:a|b')).toEqual({ dimension: 'page', op: 'contains', values: ['a|b'] });
    expect(parseFilter('page:matches:*a|b*')).toEqual({ dimension: 'page', op: 'matches', values: ['*a|b*'] });
  });

  it('keeps every colon after the operator in the value', () => {
    expect(parseFilter('page:is:/a:b')).toEqual({ dimension: 'page', op: 'is', values: ['/a:b'] });
    expect(parseFilter('referrer:contains:https://x.example:8080/')).toEqual({ dimension: 'referrer', op: 'contains', values: ['https://x.example:8080/'] });
    expect(parseFilter('page:is:/a:1|/b:2')).toEqual({ dimension: 'page', op: 'is', values: ['/a:1', '/b:2'] });
    expect(parseFilter('utm_campaign:is::')).toEqual({ dimension: 'utm_campaign', op: 'is', values: [':'] });
  });

  it.each([
    ['page', 'write it as dimension:operator:value'],
    ['page:is', 'write it as dimension:operator:value'],
    ['', 'write it as dimension:operator:value'],
    ['path:is:/a', 'the dimension must be one of: '],
    ['Page:is:/a', 'the dimension must be one of: '],
    [':is:/a', 'the dimension must be one of: '],
    ['page:equals:/a', 'the operator must be one of: '],
    ['page:IS:/a', 'the operator must be one of: '],
    ['page::/a', 'the operator must be one of: '],
    ['page:is:', 'the value must not be empty'],
    ['page:contains:', 'the value must not be empty'],
    ['page:matches:', 'the value must not be empty'],
    ['page:is:/a|', 'the value must not be empty'],
    ['page:is_not:|/a', 'the value must not be empty'],
    ['page:is:/a||/b', 'the value must not be empty'],
  ])('refuses %j with a 400 that names it', (text, why) => {
    const err = thrown(() => parseFilter(text));
    expect(err.code).toBe(400);
    expect(err.type).toBe('validation_failed');
    expect(err.message.startsWith(`filter "${text}": `)).toBe(true);
    expect(err.data).toEqual({ fields: [{ field: 'filter', message: err.message, type: 'filter' }] });
    expect(err.message).toContain(why);
  });

  it('refuses more than 100 values and values longer than 2048 characters', () => {
    const many = `page:is:${Array.from({ length: 101 }, (_, i) => `/p${i}`).join('|')}`;
    expect(thrown(() => parseFilter(many)).message).toBe(`filter "${many.slice(0, 64)}…": at most 100 values`);
    const long = `page:contains:${'x'.repeat(2049)}`;
    expect(thrown(() => parseFilter(long)).message).toBe(`filter "${long.slice(0, 64)}…": a value may have at most 2048 characters`);
    expect(parseFilter(`page:contains:${'x'.repeat(2048)}`).values[0]).toHaveLength(2048);
  });

  it('lists the valid dimensions and operators when one is unknown', () => {
    expect(thrown(() => parseFilter('path:is:/a')).message).toContain('the dimension must be one of: page, entry_page, exit_page, hostname,');
    expect(thrown(() => parseFilter('page:like:/a')).message).toBe('filter "page:like:/a": the operator must be one of: is, is_not, contains, matches');
  });
});

describe('parseFilters', () => {
  it('reads nothing, one filter or a repeated parameter', () => {
    expect(parseFilters(undefined)).toEqual([]);
    expect(parseFilters('country:is:DE')).toEqual([{ dimension: 'country', op: 'is', values: ['DE'] }]);
    expect(parseFilters(['country:is:DE', 'page:contains:/blog'])).toEqual([
      { dimension: 'country', op: 'is', values: ['DE'] },
      { dimension: 'page', op: 'contains', values: ['/blog'] },
    ]);
  });

  it('names the bad filter among good ones', () => {
    expect(thrown(() => parseFilters(['country:is:DE', 'colour:is:red'])).message).toContain('filter "colour:is:red"');
  });

  it('names every bad filter at once', () => {
    const err = thrown(() => parseFilters(['colour:is:red', 'country:is:DE', 'page:like:/a']));
    expect((err.data as { fields: { message: string }[] }).fields.map((f) => f.message)).toEqual([
      expect.stringMatching(/^filter "colour:is:red": the dimension must be one of: /),
      'filter "page:like:/a": the operator must be one of: is, is_not, contains, matches',
    ]);
  });

  it('refuses filters that are not text, and more than 20', () => {
    expect(thrown(() => parseFilters({ page: 'x' })).message).toBe('filter must be given as filter=dimension:operator:value (repeat it to combine)');
    expect(thrown(() => parseFilters(['page:is:/a', 3])).code).toBe(400);
    expect(thrown(() => parseFilters(Array.from({ length: 21 }, () => 'page:is:/a'))).message).toBe('filter may be given at most 20 times');
    expect(parseFilters(Array.from({ length: 20 }, () => 'page:is:/a'))).toHaveLength(20);
  });
});

describe('wildcardToLike', () => {
  it('turns * into % and escapes LIKE’s own wildcards', () => {
    expect(wildcardToLike('/blog/*')).toBe('/blog/%');
    expect(wildcardToLike('*/docs/*')).toBe('%/docs/%');
    expect(wildcardToLike('/100%_off')).toBe('/100\\%\\_off');
    expect(wildcardToLike('a\\b*')).toBe('a\\\\b%');
  });
});
