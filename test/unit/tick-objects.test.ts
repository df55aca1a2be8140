import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import { NODE_BIN, ROOT } from '../support/instance.ts';

const run = promisify(execFile);

/**
 * The states of the call sites that define nextTick's tick-object properties, after bursts of
 * ticks separated by idle full garbage collections (what a node goes through between bursts of
 * requests). V8 prints them with %DebugPrint.
 */
async function tickPropertySites(keep: boolean): Promise<string[]> {
  const module = pathToFileURL(join(ROOT, 'lib/tick-objects.ts')).href;
  const script = `
    const { keepTickObjectShapes } = await import(${JSON.stringify(module)});
    if (${keep}) keepTickObjectShapes();
    const noop = () => {};
    for (let burst = 0; burst < 4; burst++) {
      for (let i = 0; i < 100; i++) process.nextTick(noop);
      await new Promise((resolve) => setTimeout(resolve, 5));
      globalThis.gc();
    }
    %DebugPrint(process.nextTick);
  `;
  const { stdout } = await run(NODE_BIN, ['--allow-natives-syntax', '--expose-gc', '--input-type=module', '--eval', script], { maxBuffer: 16 * 1024 * 1024 });
  return [...stdout.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((match) => match[1]);
}

describe('keepTickObjectShapes', () => {
  it('keeps every property of the tick objects on its fast path through idle full collections', async () => {
    const sites = await tickPropertySites(true);
    expect(sites.length).toBeGreaterThanOrEqual(4);
    expect(new Set(sites)).toEqual(new Set(['MONOMORPHIC']));
  });

  it('is needed: without it, the shapes rebuilt after a full collection leave those sites generic', async () => {
    const sites = await tickPropertySites(false);
    expect(sites.filter((state) => state === 'MEGAMORPHIC').length).toBeGreaterThanOrEqual(3);
  });
});
