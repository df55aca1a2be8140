// What the gateway puts in ctx.meta for every HTTP request, so actions never touch req/res.
import type { ApiClientPrincipal } from '../lib/auth/api-clients.ts';
import type { SessionInfo, UserPrincipal } from '../lib/auth/sessions.ts';
import type { RequestInfo } from '../lib/ingest/pipeline.ts';

export interface RequestMeta {
  request: RequestInfo;
  /** The signed-in person (session cookie), if any. */
  user?: UserPrincipal;
  session?: SessionInfo;
  /** Set when the request carried a valid API-client token. */
  apiClient?: ApiClientPrincipal;
  $statusCode?: number;
  $responseHeaders?: Record<string, string | string[]>;
}
