// The session as the API shows it (login, MFA and passkey sign-in, the session API): one shape,
// so every way of signing in answers the dashboard the same.
import type { Config } from '../config.ts';
import type { Authenticated, SessionInfo } from './sessions.ts';

export type SessionViewConfig = Pick<Config, 'authSessionMinutes' | 'authSessionWarningSeconds' | 'authRememberMeDays'>;

export interface SessionView {
  issued_at: string;
  expires_at: string;
  duration_seconds: number;
  warning_seconds: number;
  remembered: boolean;
  remember_expires_at: string | null;
  remember_me_duration_days: number;
}

const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

export function sessionView(config: SessionViewConfig, session: SessionInfo): SessionView {
  return {
    issued_at: iso(session.issuedAt),
    expires_at: iso(session.expiresAt),
    duration_seconds: config.authSessionMinutes * 60,
    warning_seconds: config.authSessionWarningSeconds,
    remembered: session.rememberId !== undefined,
    remember_expires_at: session.rememberExpiresAt ? iso(session.rememberExpiresAt) : null,
    remember_me_duration_days: config.authRememberMeDays,
  };
}

/** The answer to a completed sign-in: `{status: 'ok', user, session}`. */
export function signedInView(config: SessionViewConfig, result: Authenticated) {
  return { status: 'ok' as const, user: result.user, session: sessionView(config, result.session) };
}
