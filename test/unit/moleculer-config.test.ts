import { describe, expect, it } from '@jest/globals';
import { ServiceBroker } from 'moleculer';
import { contextIds } from '../../moleculer.config.ts';

describe('contextIds', () => {
  it('never repeats an id, within one broker or across brokers', () => {
    const first = contextIds();
    const second = contextIds();
    const ids = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      ids.add(first());
      ids.add(second());
    }
    expect(ids.size).toBe(20_000);
  });

  it('names the contexts of a broker given it', async () => {
    const ids = contextIds();
    const sample = ids();
    const broker = new ServiceBroker({ logger: false, uidGenerator: ids });
    broker.createService({ name: 'echo', actions: { id: (ctx) => ctx.id } });
    await broker.start();
    try {
      const id = (await broker.call('echo.id')) as string;
      expect(id.slice(0, id.lastIndexOf('-'))).toBe(sample.slice(0, sample.lastIndexOf('-')));
      expect(id).not.toBe(sample);
    } finally {
      await broker.stop();
    }
  });
});
