// Who is signed in and until when. Knows the session's expiry from /api/auth/session, counts it
// down, extends it on request, and sends the person to the login screen with the reason (signed
// out, or the session ended) that screen shows. The reason travels in history state (set by the
// redirect in App.tsx), so typing /login never shows either message.
import { useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useRef, useState } from 'react';
import { ApiError, api, type SessionInfo, type SignedIn, setUnauthorizedHandler, type User } from './api.ts';

export type LoginReason = 'signed_out' | 'expired';

interface SessionState {
  status: 'loading' | 'signed_in' | 'signed_out';
  /** Why the last session of this tab ended; the redirect to /login carries it. */
  ended: LoginReason | null;
  needsSetup: boolean;
  user: User | null;
  session: SessionInfo | null;
}

interface SessionApi extends SessionState {
  /** Seconds left in the session (null when signed out). */
  remaining: number | null;
  /** True from warning_seconds before expiry on, unless remember-me renews the session anyway. */
  warning: boolean;
  signedIn(result: SignedIn): void;
  signOut(): Promise<void>;
  extend(): Promise<void>;
}

const SessionContext = createContext<SessionApi | null>(null);

export function useSession(): SessionApi {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}

const secondsUntil = (iso: string, now: number) => Math.max(0, Math.round((Date.parse(iso) - now) / 1000));

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<SessionState>({ status: 'loading', ended: null, needsSetup: false, user: null, session: null });
  const [now, setNow] = useState(() => Date.now());
  const queries = useQueryClient();
  const ending = useRef(false);

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
      const status = await api<{ needs_setup: boolean }>('/api/status', { session: false });
      try {
        const current = await api<{ user: User } & SessionInfo>('/api/auth/session', { session: false });
        const { user, ...session } = current;
        if (!cancelled) setState({ status: 'signed_in', ended: null, needsSetup: false, user, session });
      } catch {
        if (!cancelled) setState({ status: 'signed_out', ended: null, needsSetup: status.needs_setup, user: null, session: null });
      }
    })().catch(() => !cancelled && setState({ status: 'signed_out', ended: null, needsSetup: false, user: null, session: null }));
    return () => {
      cancelled = true;
    };
  }, []);

  const signedInNow = state.status === 'signed_in';
  useEffect(() => {
    if (!signedInNow) return;
    setUnauthorizedHandler(() => end('expired'));
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => {
      setUnauthorizedHandler(null);
      clearInterval(timer);
    };
  }, [signedInNow, end]);

  const remaining = state.session ? secondsUntil(state.session.expires_at, now) : null;

  // At zero, ask the server: a remembered sign-in renews itself, anything else has ended.
  useEffect(() => {
    if (remaining !== 0 || ending.current) return;
    ending.current = true;
    api<{ user: User } & SessionInfo>('/api/auth/session')
      .then(({ user, ...session }) => setState((s) => ({ ...s, user, session })))
      .catch(() => undefined)
      .finally(() => {
        ending.current = false;
      });
  }, [remaining]);

  const value = useMemo<SessionApi>(
    () => ({
      ...state,
      remaining,
      warning: remaining !== null && state.session !== null && !state.session.remembered && remaining <= state.session.warning_seconds,
      signedIn(result) {
        setNow(Date.now());
        setState({ status: 'signed_in', ended: null, needsSetup: false, user: result.user, session: result.session });
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
          const { user, ...session } = await api<{ user: User } & SessionInfo>('/api/auth/session/extend', { method: 'POST' });
          setNow(Date.now());
          setState((s) => ({ ...s, user, session }));
        } catch (err) {
          if (!(err instanceof ApiError && err.status === 401)) throw err;
        }
      },
    }),
    [state, remaining, end],
  );

  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function formatCountdown(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const mm = h > 0 ? String(m).padStart(2, '0') : String(m);
  return `${h > 0 ? `${h}:` : ''}${mm}:${String(s).padStart(2, '0')}`;
}
