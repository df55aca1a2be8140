// What a node caches about who may do what: a user's session row (seconds) and each verified API
// token with its site roles already lowered to its owner's (seconds). A change to credentials,
// roles or memberships must reach every node's caches at once, or a removed member's token would
// go on reading until its entry expired. The node making the change drops its own entries before
// answering and broadcasts the change; every node's users service drops theirs when it arrives.
import type { Context } from 'moleculer';
import type { Runtime } from '../runtime.ts';

export const PRINCIPALS_CHANGED = 'users.credentials.changed';

/** Whose cached principals to drop: one user's (their sessions and the tokens they own), one token, or every token. */
export interface PrincipalsChange {
  user_id?: string;
  api_client_id?: string;
  /** Site roles moved for many people at once (a site changed team or was deleted). */
  all_tokens?: boolean;
}

export function forgetPrincipalsLocally(runtime: Pick<Runtime, 'sessions' | 'apiClients'>, { user_id, api_client_id, all_tokens }: PrincipalsChange): void {
  if (user_id) {
    runtime.sessions.forget(user_id);
    runtime.apiClients.forget({ ownerUserId: user_id });
  }
  if (api_client_id) runtime.apiClients.forget({ clientId: api_client_id });
  if (all_tokens) runtime.apiClients.forget({ all: true });
}

/** Drops this node's entries now and tells every other node to drop theirs. */
export function principalsChanged(ctx: Context, runtime: Pick<Runtime, 'sessions' | 'apiClients'>, change: PrincipalsChange): void {
  forgetPrincipalsLocally(runtime, change);
  void ctx.broadcast(PRINCIPALS_CHANGED, change);
}
