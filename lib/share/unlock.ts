// Password-protected share links: the right password earns an HttpOnly cookie for that one link (a
// signed challenge token naming the link, valid a day), scoped by name and path to the link's API,
// so unlocking one link says nothing about any other.
import { verifyPassword } from '../auth/passwords.ts';
import { parseCookies, type SessionService } from '../auth/sessions.ts';
import { PlumbError, unauthorized } from '../errors.ts';
import type { ResolvedShare } from './links.ts';

export const SHARE_UNLOCK_SECONDS = 86_400;
const PURPOSE = 'share';

export const shareCookieName = (shareId: string) => `plumb_share_${shareId}`;

/**
 * 401 with its own code, so the public view knows to ask for the password. The code is not in
 * lib/errors.ts's list (that file is shared); it is the one error of this kind, widened here once.
 */
export const passwordRequired = () => new PlumbError(401, 'password_required', 'This share link is protected by a password');

/** The Set-Cookie value unlocking one link; Path is the link's own API, where the browser sends it. */
export async function unlockCookie(sessions: SessionService, share: ResolvedShare, token: string, secure: boolean): Promise<string> {
  const value = await sessions.signChallenge(PURPOSE, share.id, {}, SHARE_UNLOCK_SECONDS);
  return `${shareCookieName(share.id)}=${value}; Path=/api/share/${token}; HttpOnly; SameSite=Lax; Max-Age=${SHARE_UNLOCK_SECONDS}${secure ? '; Secure' : ''}`;
}

/** Checks a password attempt; wrong → 401 (the same answer whatever was wrong with it). */
export async function unlockShare(share: ResolvedShare, password: string): Promise<void> {
  if (!share.passwordHash) return;
  if (!(await verifyPassword(password, share.passwordHash))) throw unauthorized('Wrong password for this share link');
}

/** Lets the request through when the link has no password or the request carries its unlock cookie. */
export async function assertUnlocked(sessions: SessionService, share: ResolvedShare, cookieHeader: string | undefined): Promise<void> {
  if (!share.passwordHash) return;
  const value = parseCookies(cookieHeader)[shareCookieName(share.id)];
  const verified = value ? await sessions.verifyChallenge(PURPOSE, value) : null;
  if (verified?.subject !== share.id) throw passwordRequired();
}
