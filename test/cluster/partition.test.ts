// A follower cut off from the Moleculer transporter (its NATS connection runs through a TCP proxy
// this test controls; its JetStream connection does not): its server ingest is still acknowledged,
// buffered in JetStream and stored once by the leader; after the partition heals it sees the
// leader again and forwards to it.
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { NATS_URL, signUpOwner, startCluster, type TestCluster } from '../support/cluster.ts';
import { type Instance, waitFor } from '../support/instance.ts';

interface Proxy {
  url: string;
  cut(): void;
  heal(): void;
  close(): Promise<void>;
}

/** A TCP proxy to the NATS server that can drop every connection and refuse new ones. */
async function natsProxy(): Promise<Proxy> {
  const target = new URL(NATS_URL);
  const sockets = new Set<Socket>();
  let open = true;
  const server: Server = createServer((client) => {
    if (!open) return client.destroy();
    const upstream = tcpConnect(Number(target.port || 4222), target.hostname);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ]) {
      sockets.add(from);
      from.pipe(to);
      from.on('error', () => to.destroy());
      from.on('close', () => {
        sockets.delete(from);
        to.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `nats://127.0.0.1:${port}`,
    cut() {
      open = false;
      for (const socket of sockets) socket.destroy();
    },
    heal() {
      open = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

let cluster: TestCluster;
let proxy: Proxy;
let follower: Instance;
let members: Instance[];

beforeAll(async () => {
  proxy = await natsProxy();
  cluster = await startCluster({ leaseMs: 3000 });
  const [a, b] = await Promise.all(['node-a', 'node-b'].map((id) => cluster.start(id)));
  await signUpOwner(cluster, a);
  await cluster.agreedLeader([a, b], 30_000);
  // Joins once a or b leads, so the partitioned node is a follower.
  follower = await cluster.start('node-c', { PLUMB_TRANSPORTER: proxy.url, PLUMB_JETSTREAM_URL: NATS_URL, PLUMB_FORWARD_TIMEOUT_MS: '1000' });
  members = [a, b, follower];
}, 180_000);

afterAll(async () => {
  await cluster?.close();
  await proxy?.close();
}, 60_000);

describe('a follower partitioned from the transporter', () => {
  it('buffers its server ingest in JetStream while cut off, and forwards to the leader again once healed', async () => {
    const leader = await cluster.agreedLeader(members, 30_000);
    expect(leader).not.toBe('node-c');

    proxy.cut();
    const during = Array.from({ length: 20 }, (_, i) => `/partitioned/${i}`);
    expect(await Promise.all(during.map((p) => cluster.sendPageview(follower, p)))).toEqual(during.map(() => 202));
    expect((await cluster.view(follower)).forwarding).toMatchObject({ forwarded: 0, buffered: 20 });

    let stored = new Map<string, number>();
    await waitFor(
      async () => {
        stored = await cluster.storedPaths();
        return during.every((p) => stored.has(p));
      },
      30_000,
      () => `buffered events not delivered: ${during.filter((p) => !stored.has(p)).length} missing`,
    );

    proxy.heal();
    // The follower's NATS client reconnects on its own schedule; probe until a forward gets through.
    const probes: string[] = [];
    await waitFor(
      async () => {
        const path = `/probe/${probes.length}`;
        probes.push(path);
        expect(await cluster.sendPageview(follower, path)).toBe(202);
        return (await cluster.view(follower)).forwarding!.forwarded > 0;
      },
      30_000,
      () => 'the follower never reached the leader again',
    );
    expect(await cluster.agreedLeader(members, 30_000)).toBe(leader);
    const buffered = (await cluster.view(follower)).forwarding!.buffered;
    const after = Array.from({ length: 10 }, (_, i) => `/healed/${i}`);
    expect(await Promise.all(after.map((p) => cluster.sendPageview(follower, p)))).toEqual(after.map(() => 202));
    expect((await cluster.view(follower)).forwarding).toMatchObject({ forwarded: 11, buffered });
    await waitFor(
      async () => {
        stored = await cluster.storedPaths();
        return [...after, ...probes].every((p) => stored.has(p));
      },
      30_000,
      () => 'forwarded events not stored after the partition healed',
    );
    // Requests held in the follower's NATS client during the partition may reach the leader late;
    // they carry their batch ids, so JetStream drops them: every event is stored once.
    expect([...stored].filter(([, n]) => n !== 1)).toEqual([]);
    expect(stored.size).toBe(during.length + probes.length + after.length);
  });
});
