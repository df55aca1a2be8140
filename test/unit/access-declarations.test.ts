// Every HTTP action says who may call it: a broker with the access middleware refuses to register
// an action whose route (in any of Moleculer's forms) comes without `auth`, or a site or team route
// without the `access` rule that guards it, and names the action.
import { afterEach, describe, expect, it } from '@jest/globals';
import { ServiceBroker, type ServiceSchema } from 'moleculer';
import { accessMiddleware, assertDeclaresAccess } from '../../lib/auth/access.ts';

let broker: ServiceBroker | undefined;

function register(actions: ServiceSchema['actions']): () => void {
  broker = new ServiceBroker({ logger: false, middlewares: [accessMiddleware(() => ({ query: async () => ({ rows: [], rowCount: 0 }) }) as never)] });
  return () => broker!.createService({ name: 'probe', actions });
}

afterEach(async () => {
  await broker?.stop();
  broker = undefined;
});

describe('the access middleware at registration', () => {
  it('refuses a string route without auth, naming the action and its route', () => {
    expect(register({ secret: { rest: 'GET /api/secret', handler: () => 'x' } })).toThrow(/^HTTP action probe\.secret \(GET \/api\/secret\) must declare auth/);
  });

  it('refuses the object form of a route without auth', () => {
    expect(register({ secret: { rest: { method: 'GET', path: '/secret' }, handler: () => 'x' } })).toThrow(/HTTP action probe\.secret \(GET \/secret\) must declare auth/);
  });

  it('refuses a route outside /api without auth, and a list of routes', () => {
    expect(register({ page: { rest: ['GET /page', 'HEAD /page'], handler: () => 'x' } })).toThrow(/probe\.page \(GET \/page, HEAD \/page\) must declare auth/);
  });

  it('refuses an auth it does not know', () => {
    expect(register({ odd: { rest: 'GET /odd', auth: 'everyone', handler: () => 'x' } as never })).toThrow(/probe\.odd .* must declare auth/);
  });

  it('refuses a site or team route whose access rule is missing', () => {
    expect(register({ stats: { rest: 'GET /api/sites/:id/secret', auth: 'user', handler: () => 'x' } as never })).toThrow(/probe\.stats .* acts on a site and must declare access\.site/);
    expect(() =>
      assertDeclaresAccess('teams.secret', { rest: { method: 'GET', path: '/api/user/teams/:id/secret' }, auth: 'user', access: { site: { param: 'id', role: 'viewer' } } }),
    ).toThrow(/teams\.secret .* acts on a team and must declare access\.team/);
  });

  it('registers actions that declare their access, and actions without a route', () => {
    expect(
      register({
        open: { rest: 'GET /open', auth: 'none', handler: () => 'x' },
        site: { rest: 'GET /api/sites/:id/thing', auth: 'any', access: { site: { param: 'id', role: 'viewer' } }, handler: () => 'x' } as never,
        internal: { handler: () => 'x' },
      }),
    ).not.toThrow();
  });
});
