// Where the browser lands after a provider sent it back: signed in (session cookies, then the
// dashboard), at the second-factor step of the login page when TOTP is enrolled (the same MFA
// challenge password sign-in issues), or back at the login page with a short reason code.
import type { Config } from '../../config.ts';
import type { MetadataQueryable } from '../../stores/metadata/index.ts';
import { MFA_CHALLENGE_SECONDS, type SessionService } from '../sessions.ts';
import { totpEnabled } from '../totp.ts';

export interface Landing {
  location: string;
  cookies: string[];
}

export async function signedInLanding(sessions: SessionService, db: MetadataQueryable, userId: string, remember: boolean): Promise<Landing> {
  if (await totpEnabled(db, userId)) {
    const challenge = await sessions.signChallenge('mfa', userId, { remember }, MFA_CHALLENGE_SECONDS);
    // In the fragment: never sent to a server, never in a Referer.
    return { location: `/login#mfa=${encodeURIComponent(challenge)}`, cookies: [] };
  }
  const started = await sessions.start(userId, { remember });
  return { location: '/', cookies: started.setCookies };
}

export const refusedLanding = (reason: string): Landing => ({ location: `/login?signin_error=${encodeURIComponent(reason)}`, cookies: [] });

/** Redirect answer of a callback action: 303 to the landing, with its cookies and the spent flow cookie cleared. */
export function redirectTo(meta: { $statusCode?: number; $responseHeaders?: Record<string, string | string[]>; $location?: string }, config: Config, landing: Landing, clearFlow: string) {
  meta.$statusCode = 303;
  meta.$location = `${config.publicUrl}${landing.location}`;
  meta.$responseHeaders = { 'Set-Cookie': [...landing.cookies, clearFlow], 'Cache-Control': 'no-store' };
  return null;
}
