// action() ties a handler's return type to its declared response schema: the project's own tsc
// accepts a handler that returns what the schema describes and refuses one that does not.
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { NODE_BIN, ROOT } from '../support/instance.ts';

const DIR = join(ROOT, 'test-output', 'openapi-action-types');

const HEADER = `import type {} from 'moleculer-web';
import { Type } from '@sinclair/typebox';
import { action } from '../../lib/openapi/action.ts';
import { nullable, object, page } from '../../lib/openapi/responses.ts';

const Goal = object({ id: Type.String(), name: Type.String(), revenue: nullable(object({ currency: Type.String() })) });
interface StoredGoal { id: string; name: string; revenue: { currency: string } | null }
declare const stored: StoredGoal;
`;

/** Type-checks a file of the given code; resolves with tsc's output (empty when it passed). */
async function typecheckSource(name: string, code: string): Promise<string> {
  writeFileSync(join(DIR, `${name}.ts`), `${HEADER}\n${code}\n`);
  writeFileSync(
    join(DIR, `${name}.json`),
    JSON.stringify({ extends: '../../tsconfig.json', compilerOptions: { types: ['node'] }, include: [], files: [`${name}.ts`, '../../types/moleculer.d.ts'] }),
  );
  return new Promise((resolve) => {
    execFile(NODE_BIN, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(DIR, `${name}.json`)], { cwd: ROOT }, (_err, stdout, stderr) =>
      resolve(`${stdout}${stderr}`),
    );
  });
}

/** Type-checks one action declared with action(). */
const typecheck = (name: string, declaration: string) => typecheckSource(name, `export const a = action(${declaration});`);

beforeAll(() => {
  mkdirSync(DIR, { recursive: true });
});
afterAll(() => rmSync(DIR, { recursive: true, force: true }));

describe('action(): handler return types against the response schema', () => {
  it('accepts a handler that returns exactly what the schema describes', async () => {
    const output = await typecheck(
      'exact',
      `{ rest: 'GET /api/goals', openapi: { summary: 'x', response: page(Goal) },
          handler: async () => ({ items: [stored], total: 1, limit: 10, offset: 0, has_more: false }) }`,
    );
    expect(output).toBe('');
  });

  it('refuses a field the schema does not declare, naming where it is', async () => {
    const output = await typecheck(
      'extra',
      `{ rest: 'GET /api/goals/:id', openapi: { summary: 'x', response: object({ goal: Goal }) },
         handler: async () => ({ goal: { ...stored, secret: 'leaked' } }) }`,
    );
    expect(output).toMatch(/fields the response schema does not declare.*"\.goal\.secret"/s);
  });

  it('refuses a handler that leaves out a required field', async () => {
    const output = await typecheck('missing', `{ rest: 'GET /api/goals/:id', openapi: { summary: 'x', response: object({ goal: Goal }) }, handler: () => ({ goal: { id: 'a', revenue: null } }) }`);
    expect(output).toMatch(/Property 'name' is missing/);
  });

  it('refuses a response declared on an action that does not go through action()', async () => {
    const output = await typecheckSource(
      'unchecked',
      `import type { ActionSchema } from 'moleculer';
       export const bare: ActionSchema = { rest: 'GET /api/goals/:id', openapi: { summary: 'x', response: object({ goal: Goal }) }, handler: () => ({ goal: 1 }) };`,
    );
    expect(output).toMatch(/is not assignable to type 'CheckedDoc'/);
  });

  it('refuses a field of another type', async () => {
    const output = await typecheck('wrong-type', `{ rest: 'GET /api/goals/:id', openapi: { summary: 'x', response: object({ goal: Goal }) }, handler: () => ({ goal: { ...stored, name: 42 } }) }`);
    expect(output).toMatch(/Type 'number' is not assignable to type 'string'/);
  });
});
