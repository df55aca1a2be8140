// Sign-in: email and password, then the second factor the server asks for (TOTP or a recovery
// code), or a passkey without a password. Says why the person is here when they signed out or
// their session ended; a direct visit shows neither message. Offers a reset link by mail when the
// instance can send mail.
import { startAuthentication } from '@simplewebauthn/browser';
import { KeyRound } from 'lucide-react';
import { type ReactNode, useEffect, useState } from 'react';
import { Link, Navigate, useLocation, useNavigate } from 'react-router';
import { api, type MfaRequired, type SignedIn } from '../api.ts';
import { Loading } from '../App.tsx';
import { ThemeToggle } from '../components/Layout.tsx';
import { useBusyAction } from '../busy.ts';
import { submitHandler } from '../forms.ts';
import { type LoginReason, useSession } from '../session.tsx';
import { useTitle } from '../title.ts';

const REASONS: Record<LoginReason, string> = {
  signed_out: 'You have signed out.',
  expired: 'Your session has ended. Sign in again to continue.',
};

export function AuthFrame({ title, children }: { title: string; children: ReactNode }) {
  useTitle(title);
  return (
    <main id="main" className="auth">
      <div className="auth-corner">
        <ThemeToggle />
      </div>
      <div className="auth-card">
        <p className="brand">
          <span className="brand-mark" aria-hidden>
            ◆
          </span>
          Plumb
        </p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

/** A form of the sign-in pages: its fields, the message of a failed try, the submit button (off while busy), then `after`. */
export function AuthForm({ onSubmit, error, busy, submit, after, children }: { onSubmit(): void; error: string | null; busy: boolean; submit: ReactNode; after?: ReactNode; children: ReactNode }) {
  return (
    <form className="stack" onSubmit={submitHandler(onSubmit)}>
      {children}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="button primary" disabled={busy}>
        {submit}
      </button>
      {after}
    </form>
  );
}

export default function Login() {
  const session = useSession();
  const location = useLocation();
  const navigate = useNavigate();
  const state = (location.state ?? {}) as { reason?: LoginReason; from?: string };
  // Shown once: the history entry forgets the reason, so a reload or a later visit shows nothing.
  const [reason] = useState(state.reason);
  useEffect(() => {
    if (state.reason) navigate(location.pathname, { replace: true, state: { from: state.from } });
  }, [state.reason, state.from, location.pathname, navigate]);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [remember, setRemember] = useState(false);
  const [mfa, setMfa] = useState<MfaRequired | null>(null);
  const [factor, setFactor] = useState<'totp' | 'recovery_code'>('totp');
  const [code, setCode] = useState('');
  const { error, busy, run } = useBusyAction();

  // While the person types, fetch the code of where they are going, so signing in waits only on data.
  useEffect(() => {
    const timer = setTimeout(() => {
      void import('./SiteDashboard.tsx');
      void import('./Sites.tsx');
    }, 200);
    return () => clearTimeout(timer);
  }, []);

  if (session.status === 'loading') return <Loading />;
  if (session.status === 'signed_out' && session.needsSetup) return <Navigate to="/setup" replace />;
  if (session.status === 'signed_in') return <Navigate to={state.from ?? '/'} replace />;

  const finish = (result: SignedIn | MfaRequired) => {
    if (result.status === 'mfa_required') {
      setMfa(result);
      setFactor(result.factors[0] ?? 'totp');
      return;
    }
    session.signedIn(result);
    navigate(state.from ?? '/', { replace: true });
  };

  const submitPassword = () => {
    void run(async () => finish(await api<SignedIn | MfaRequired>('/api/login', { method: 'POST', body: { email, password, remember_me: remember }, session: false })));
  };

  const submitCode = () => {
    const path = factor === 'totp' ? '/api/auth/mfa/totp/verify' : '/api/auth/mfa/recovery-code/verify';
    void run(async () => finish(await api<SignedIn>(path, { method: 'POST', body: { challenge_token: mfa!.challenge_token, code: code.trim() }, session: false })));
  };

  const passkey = () =>
    run(async () => {
      const { options, challenge_token } = await api<{ options: Parameters<typeof startAuthentication>[0]['optionsJSON']; challenge_token: string }>(
        '/api/auth/passkey/login/start',
        { method: 'POST', body: {}, session: false },
      );
      const response = await startAuthentication({ optionsJSON: options });
      finish(await api<SignedIn | MfaRequired>('/api/auth/passkey/login/finish', { method: 'POST', body: { challenge_token, response, remember_me: remember }, session: false }));
    });

  if (mfa) {
    return (
      <AuthFrame title="Second factor">
        <AuthForm
          onSubmit={submitCode}
          error={error}
          busy={busy}
          submit="Verify"
          after={
            mfa.factors.length > 1 && (
              <button
                type="button"
                className="button link"
                onClick={() => {
                  setFactor(factor === 'totp' ? 'recovery_code' : 'totp');
                  setCode('');
                }}
              >
                {factor === 'totp' ? 'Use a recovery code instead' : 'Use the authenticator app instead'}
              </button>
            )
          }
        >
          <label className="field">
            <span>{factor === 'totp' ? 'Code from your authenticator app' : 'One of your recovery codes'}</span>
            <input
              name="code"
              value={code}
              onChange={(e) => setCode(e.target.value)}
              autoComplete="one-time-code"
              inputMode={factor === 'totp' ? 'numeric' : 'text'}
              required
              // biome-ignore lint/a11y/noAutofocus: the code field is the only thing on this step
              autoFocus
            />
          </label>
        </AuthForm>
      </AuthFrame>
    );
  }

  return (
    <AuthFrame title="Sign in">
      {reason && (
        <p className="notice" role="status" data-testid="login-reason">
          {REASONS[reason]}
        </p>
      )}
      <AuthForm
        onSubmit={submitPassword}
        error={error}
        busy={busy}
        submit="Sign in"
        after={
          session.mailConfigured && (
            <Link to="/forgot-password" className="button link">
              Forgot password?
            </Link>
          )
        }
      >
        <label className="field">
          <span>Email</span>
          <input name="email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="username webauthn" required />
        </label>
        <label className="field">
          <span>Password</span>
          <input name="password" type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="current-password" required />
        </label>
        <label className="check">
          <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.target.checked)} />
          <span>Keep me signed in on this device</span>
        </label>
      </AuthForm>
      <div className="divider">
        <span>or</span>
      </div>
      <button type="button" className="button" onClick={() => void passkey()} disabled={busy}>
        <KeyRound aria-hidden size={16} /> Sign in with a passkey
      </button>
    </AuthFrame>
  );
}
