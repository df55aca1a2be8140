// The browser-bound, one-time state of a sign-in at another provider. The start signs the flow
// (provider, state, nonce, PKCE verifier, intent) into a short-lived token that travels only in an
// HttpOnly cookie of the browser that started it; the callback needs that cookie, a `state` equal
// to the one inside, and spends the token's id, so a flow finishes once, in that browser, in time.
import { timingSafeEqual } from 'node:crypto';
import { parseCookies, type SessionService } from '../sessions.ts';

export const FLOW_COOKIE = 'plumb_signin_flow';
/** Minutes a person has at the provider before the flow expires. */
export const FLOW_SECONDS = 600;

export interface FlowData {
  /** 'google' | 'entra' | 'github', or 'sso' for team single sign-on. */
  provider: string;
  state: string;
  nonce?: string;
  verifier: string;
  /** Sign in, or add the provider to the signed-in account that started the flow. */
  intent: 'login' | 'link';
  remember: boolean;
  /** The account that started a link; the team of a single sign-on. */
  userId?: string;
  teamId?: string;
  /** The invitation link's token, when the person accepts an invitation with the provider. */
  invite?: string;
}

const cookiePath = '/api/auth/';

export function flowCookies(publicUrl: string) {
  const secure = publicUrl.startsWith('https:') ? '; Secure' : '';
  return {
    // Lax: the provider's redirect back is a top-level GET navigation, which carries it.
    set: (token: string) => `${FLOW_COOKIE}=${token}; Path=${cookiePath}; HttpOnly; SameSite=Lax; Max-Age=${FLOW_SECONDS}${secure}`,
    clear: `${FLOW_COOKIE}=; Path=${cookiePath}; HttpOnly; SameSite=Lax; Max-Age=0${secure}`,
  };
}

export async function signFlow(sessions: SessionService, flow: FlowData): Promise<string> {
  return sessions.signChallenge('signin-flow', flow.userId ?? 'anonymous', { ...flow }, FLOW_SECONDS);
}

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * The flow of this callback, spent; null when the browser has no flow cookie, it is forged or
 * expired, it belongs to another provider, its state differs, or it was already used.
 */
export async function takeFlow(sessions: SessionService, cookieHeader: string | undefined, provider: string, state: string | undefined): Promise<FlowData | null> {
  const token = parseCookies(cookieHeader)[FLOW_COOKIE];
  if (!token || !state) return null;
  const challenge = await sessions.verifyChallenge('signin-flow', token);
  if (!challenge) return null;
  const data = challenge.data as unknown as FlowData;
  if (data.provider !== provider || typeof data.state !== 'string' || typeof data.verifier !== 'string' || !sameText(data.state, state)) return null;
  if (!(await sessions.spendChallenge(challenge))) return null;
  return data;
}
