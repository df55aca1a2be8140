// Who is signed in and until when. Knows the session's expiry from /api/auth/session, counts it
// down, extends it on request, and sends the person to the login screen with the reason (signed
// out, or the session ended) that screen shows. The reason travels in history state (set by the
// redirect in App.tsx), so typing /login never shows either message.
import { useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useRef, useState } from 'react';
import { ApiError, api, type SessionAnswer, type SessionView, type SignedIn, setUnauthorizedHandler, type User } from './api.ts';

export type LoginReason = 'signed_out' | 'expired';

interface SessionState {
  status: 'loading' | 'signed_in' | 'signed_out';
  /** Why the last session of this tab ended; the redirect to /login carries it. */
  ended: LoginReason | null;
  needsSetup: boolean;
  /** The instance can send mail: password reset by mail and email changes are offered. */
  mailConfigured: boolean;
  user: User | null;
  session: SessionView | null;
}

interface SessionApi extends SessionState {
  signedIn(result: SignedIn): void;
  signOut(): Promise<void>;
  extend(): Promise<void>;
  /** Asks the server about the session again (at most every few seconds). */
  refresh(): void;
}

const SessionContext = createContext<SessionApi | null>(null);

export function useSession(): SessionApi {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}

const secondsUntil = (iso: string, now: number) => Math.max(0, Math.round((Date.parse(iso) - now) / 1000));

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<SessionState>({ status: 'loading', ended: null, needsSetup: false, mailConfigured: false, user: null, session: null });
  const queries = useQueryClient();
  const asked = useRef({ inFlight: false, at: 0 });

  // The signed-in routes redirect to /login with the reason as soon as the status changes.
  const end = useCallback(
    (reason: LoginReason) => {
      queries.clear();
      setState((s) => ({ ...s, status: 'signed_out', ended: reason, user: null, session: null }));
    },
    [queries],
  );

  useEffect(() => {
    let cancelled = false;
    (async () => {
      const status = await api<{ needs_setup: boolean; mail_configured: boolean }>('/api/status', { session: false });
      const mailConfigured = status.mail_configured === true;
      try {
        const current = await api<SessionAnswer>('/api/auth/session', { session: false });
        const { user, ...session } = current;
        if (!cancelled) setState({ status: 'signed_in', ended: null, needsSetup: false, mailConfigured, user, session });
      } catch {
        if (!cancelled) setState({ status: 'signed_out', ended: null, needsSetup: status.needs_setup, mailConfigured, user: null, session: null });
      }
    })().catch(() => !cancelled && setState({ status: 'signed_out', ended: null, needsSetup: false, mailConfigured: false, user: null, session: null }));
    return () => {
      cancelled = true;
    };
  }, []);

  const signedInNow = state.status === 'signed_in';
  useEffect(() => {
    if (!signedInNow) return;
    setUnauthorizedHandler(() => end('expired'));
    return () => setUnauthorizedHandler(null);
  }, [signedInNow, end]);

  // A 401 here ends the session through the unauthorized handler.
  const refresh = useCallback(() => {
    const now = Date.now();
    if (asked.current.inFlight || now - asked.current.at < 5000) return;
    asked.current = { inFlight: true, at: now };
    api<SessionAnswer>('/api/auth/session')
      .then(({ user, ...session }) => setState((s) => ({ ...s, user, session })))
      .catch(() => undefined)
      .finally(() => {
        asked.current.inFlight = false;
      });
  }, []);

  const value = useMemo<SessionApi>(
    () => ({
      ...state,
      refresh,
      signedIn(result) {
        setState((s) => ({ ...s, status: 'signed_in', ended: null, needsSetup: false, user: result.user, session: result.session }));
      },
      async signOut() {
        try {
          await api('/api/logout', { method: 'POST', session: false });
        } finally {
          end('signed_out');
        }
      },
      async extend() {
        try {
          const { user, ...session } = await api<SessionAnswer>('/api/auth/session/extend', { method: 'POST' });
          setState((s) => ({ ...s, user, session }));
        } catch (err) {
          if (!(err instanceof ApiError && err.status === 401)) throw err;
        }
      },
    }),
    [state, refresh, end],
  );

  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

/**
 * Seconds left in the session, ticking, and whether to warn (from warning_seconds before the end,
 * unless remember-me renews the session anyway). Only the components that show the time use it,
 * so the rest of the app does not re-render every second. At zero it asks the server: a
 * remembered sign-in renews itself, anything else has ended.
 */
export function useSessionClock(): { remaining: number | null; warning: boolean } {
  const { session, refresh } = useSession();
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!session) return;
    const tick = () => {
      const t = Date.now();
      setNow(t);
      if (secondsUntil(session.expires_at, t) === 0) refresh();
    };
    tick();
    const timer = setInterval(tick, 1000);
    return () => clearInterval(timer);
  }, [session, refresh]);
  const remaining = session ? secondsUntil(session.expires_at, now) : null;
  return { remaining, warning: remaining !== null && session !== null && !session.remembered && remaining <= session.warning_seconds };
}

export function formatCountdown(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const mm = h > 0 ? String(m).padStart(2, '0') : String(m);
  return `${h > 0 ? `${h}:` : ''}${mm}:${String(s).padStart(2, '0')}`;
}

/** The same time in words, for screen readers: "14 minutes 58 seconds", "1 hour 5 minutes". */
export function spokenDuration(seconds: number): string {
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return m > 0 ? `${unit(h, 'hour')} ${unit(m, 'minute')}` : unit(h, 'hour');
  if (m > 0) return s > 0 ? `${unit(m, 'minute')} ${unit(s, 'second')}` : unit(m, 'minute');
  return unit(s, 'second');
}
