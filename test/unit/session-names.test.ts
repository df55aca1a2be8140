// "Session" means the dashboard sign-in session only. A visitor's visit is a visit (its id is
// stored in the `session_id` column, the analytics contract's name), and a connection held to a
// store is a connection; code that says "session" for either reads as if it were about sign-in.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';

const ROOT = new URL('../../', import.meta.url).pathname;

/** Names that say "session" but are the contract's, ClickHouse's, PostgreSQL's or chDB's, not ours to rename. */
const OTHER_TERMS = /session_id|session_timezone|session-level|unique_sessions|Session as ChdbConnection/g;

describe('the word session in the ingest path and the stores', () => {
  it('names no identifier there but the contract’s columns and the libraries’ own terms', () => {
    const folders = ['lib/ingest', 'lib/stores'];
    const uses = folders.flatMap((folder) =>
      readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.ts'))
        .flatMap((file) =>
          readFileSync(join(ROOT, folder, file), 'utf8')
            .split('\n')
            .map((line, index) => [`${folder}/${file}:${index + 1}`, line.replace(OTHER_TERMS, '')] as const)
            .filter(([, line]) => /session/i.test(line) && !/^\s*(\/\/|\/\*|\*)/.test(line))
            .map(([where]) => where),
        ),
    );
    expect(uses).toEqual([]);
  });
});
