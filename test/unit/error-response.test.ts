// How store failures reach the wire: a read refused by the node's per-read memory cap is a 503
// with Retry-After and a message that says what to do, not an internal error.
import { describe, expect, it } from '@jest/globals';
import { renderError } from '../../lib/http/error-response.ts';
import { toStoreError } from '../../lib/stores/analytics/transport.ts';

const CHDB_TEXT =
  'Code: 241. DB::Exception: Query memory limit exceeded: would use 17.12 MiB (attempt to allocate chunk of 4.97 MiB), maximum: 16.00 MiB. Untracked memory across all threads: 154.61 KiB: ';

describe('renderError', () => {
  it('answers a read over the memory cap 503 with Retry-After, naming the setting', () => {
    const rendered = renderError(toStoreError(new Error(CHDB_TEXT)));
    expect(rendered.status).toBe(503);
    expect(rendered.headers['Retry-After']).toBe('5');
    expect(rendered.body.code).toBe('unavailable');
    expect(rendered.body.message).toContain('-query-memory-mb');
  });

  it('knows the refusal by its type when it comes from another node, as Moleculer rebuilds it', () => {
    const remote = Object.assign(new Error('Query memory limit exceeded'), { name: 'AnalyticsStoreError', code: 241, type: 'MEMORY_LIMIT_EXCEEDED' });
    expect(renderError(remote).status).toBe(503);
  });

  it('keeps any other store failure an internal error whose text does not leak', () => {
    const rendered = renderError(toStoreError(new Error('Code: 60. DB::Exception: Unknown table expression identifier tenant_x.hits. (UNKNOWN_TABLE)')));
    expect(rendered).toEqual({ status: 500, body: { message: 'Internal server error', code: 'internal_error' }, headers: {} });
  });
});
