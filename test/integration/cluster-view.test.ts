// GET /api/admin/cluster on a single node: the same shape a cluster answers, with this node as
// the only member and leader, and the disk journal as the buffer.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, person } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode({ PLUMB_NODE_ID: 'solo-node' });
});

afterAll(() => t?.stop());

describe('GET /api/admin/cluster', () => {
  it('shows a single node leading, with its journal as the ingest buffer', async () => {
    const admin = await person(t, 'admin');
    const res = await as(t, admin, 'GET', '/api/admin/cluster');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      mode: 'single',
      namespace: 'plumb',
      node_id: 'solo-node',
      leader: { node_id: 'solo-node', epoch: 1, lease_expires_at: null },
      this_node: { node_id: 'solo-node', leader: true, epoch: 1 },
      nodes: [{ node_id: 'solo-node', available: true, local: true, leader: true }],
      buffer: { pending: 0, unit: 'records' },
      forwarding: null,
    });
  });

  it('is refused to a signed-in person who is not an instance admin', async () => {
    const user = await person(t, 'user');
    expect((await as(t, user, 'GET', '/api/admin/cluster')).status).toBe(403);
  });
});
