// The fencing epoch is checked at the resource: the leader_epoch row in a real PostgreSQL.
// A deposed leader's side effect is refused and rolled back, even while it still thinks it leads.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { assertLeaderEpoch, createLeaderFence, currentLeaderEpoch, FencedError } from '../../cluster/fencing.ts';
import { silentLog } from '../../lib/log.ts';
import { type MetadataStore, openMetadataStore } from '../../lib/stores/metadata/index.ts';
import { POSTGRES_URL } from '../support/cluster.ts';

const database = `plumb_cluster_${randomBytes(4).toString('hex')}`;
let admin: pg.Client;
let store: MetadataStore;

beforeAll(async () => {
  admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect().catch((err: Error) => {
    throw new Error(`PostgreSQL is not reachable at ${POSTGRES_URL} (${err.message}); cluster tests never skip.`);
  });
  await admin.query(`CREATE DATABASE ${database}`);
  store = await openMetadataStore({ dataDir: '/nonexistent', databaseUrl: Object.assign(new URL(POSTGRES_URL), { pathname: `/${database}` }).toString(), log: silentLog });
  await store.query('CREATE TABLE side_effects (epoch bigint NOT NULL)');
});

afterAll(async () => {
  await store?.close();
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
});

const effects = async () => (await store.query<{ epoch: number }>('SELECT epoch FROM side_effects ORDER BY epoch')).rows.map((r) => r.epoch);

describe('leader fencing at the leader_epoch row', () => {
  it('lets the newest epoch act, refuses an older one, and rolls the refused side effect back', async () => {
    const fence = createLeaderFence(() => store, 'node-a', true);
    await fence.run(5, (tx) => tx.query('INSERT INTO side_effects (epoch) VALUES (5)'));
    expect(await currentLeaderEpoch(store)).toBe(5);

    const deposed = fence.run(4, (tx) => tx.query('INSERT INTO side_effects (epoch) VALUES (4)'));
    await expect(deposed).rejects.toBeInstanceOf(FencedError);
    await expect(deposed).rejects.toMatchObject({ epoch: 4, current: 5 });

    await fence.run(7, (tx) => tx.query('INSERT INTO side_effects (epoch) VALUES (7)'));
    await expect(fence.run(5, (tx) => tx.query('INSERT INTO side_effects (epoch) VALUES (5)'))).rejects.toBeInstanceOf(FencedError);
    expect(await effects()).toEqual([5, 7]);
    expect(await currentLeaderEpoch(store)).toBe(7);
  });

  it('makes a newer leader wait for an older one still inside its check, so the older commit cannot land after the takeover', async () => {
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const older = store.transaction(async (tx) => {
      await assertLeaderEpoch(tx, 8, 'node-a');
      order.push('older checked');
      await held;
      await tx.query('INSERT INTO side_effects (epoch) VALUES (8)');
      order.push('older committed');
    });
    while (!order.includes('older checked')) await new Promise((r) => setTimeout(r, 5));
    const newer = store.transaction(async (tx) => {
      await assertLeaderEpoch(tx, 9, 'node-b');
      order.push('newer claimed');
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(order).toEqual(['older checked']);
    release();
    await Promise.all([older, newer]);
    expect(order).toEqual(['older checked', 'older committed', 'newer claimed']);
    await expect(createLeaderFence(() => store, 'node-a', true).run(8, async () => undefined)).rejects.toBeInstanceOf(FencedError);
  });

  it('does not fence a single node, whose epochs restart with every process', async () => {
    const single = createLeaderFence(() => store, 'solo', false);
    await single.run(1, (tx) => tx.query('INSERT INTO side_effects (epoch) VALUES (1)'));
    expect((await effects())[0]).toBe(1);
    expect(await currentLeaderEpoch(store)).toBe(9);
  });
});
