// Sign-in: email and password, then the second factor the server asks for (TOTP or a recovery
// code), or a passkey without a password, or another provider (the ones the server enabled) or the
// team's single sign-on. Says why the person is here when they signed out or their session ended;
// a direct visit shows neither message. A provider's sign-in comes back here with the second-factor
// challenge in the fragment (#mfa=…) or a reason it was refused (?signin_error=…). Offers a reset
// link by mail when the instance can send mail.
import { startAuthentication } from '@simplewebauthn/browser';
import { Building2, KeyRound } from 'lucide-react';
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

/** Why a sign-in at another provider did not sign the person in (the callback's signin_error). */
const SIGN_IN_ERRORS: Record<string, string> = {
  state_invalid: 'That sign-in expired or was started in another browser. Start again.',
  provider_refused: 'The provider did not sign you in.',
  exchange_failed: 'The provider did not confirm the sign-in. Start again.',
  email_unverified: 'The provider did not confirm a verified email address for your account.',
  no_account: 'There is no Plumb account for that email address. Ask a team admin for an invitation.',
  confirmation_sent: 'To link this account, confirm your email address: we sent you a link. Then sign in again.',
  confirmation_invalid: 'That confirmation link is invalid, used or expired.',
  domain_not_allowed: "Your address's domain is not allowed by the team's single sign-on.",
  not_a_member: 'Your account is not a member of that team. Ask a team admin for an invitation.',
  instance_admin: 'Instance owners and admins sign in with their password, passkey or linked provider.',
  sso_removed: 'That team no longer signs in with single sign-on.',
  identity_in_use: 'That account at the provider is linked to another Plumb account.',
  provider_already_linked: 'Another account at that provider is already linked.',
  invitation_mismatch: "The provider's email address is not the one the invitation was sent to.",
  invitation_invalid: 'That invitation link is not valid, used or expired.',
  account_exists: 'An account with this email already exists: sign in with it, then open the invitation link again.',
};

interface SignInOptions {
  providers: { id: string; name: string }[];
  sso: boolean;
}

/** What the provider's callback left in the URL: a second-factor challenge, or why it refused. */
function returnedFromProvider(location: { hash: string; search: string }) {
  const challenge = new URLSearchParams(location.hash.slice(1)).get('mfa');
  const query = new URLSearchParams(location.search);
  const refused = query.get('signin_error');
  const linked = query.get('linked');
  return {
    mfa: challenge ? ({ status: 'mfa_required', challenge_token: challenge, factors: ['totp', 'recovery_code'] } as MfaRequired) : null,
    message: refused ? (SIGN_IN_ERRORS[refused] ?? 'The sign-in did not succeed. Start again.') : null,
    notice: linked ? 'Your account at the provider is linked. Sign in with it now.' : null,
  };
}

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
  const [returned] = useState(() => returnedFromProvider(location));
  const [mfa, setMfa] = useState<MfaRequired | null>(returned.mfa);
  const [options, setOptions] = useState<SignInOptions>({ providers: [], sso: false });
  const [ssoOpen, setSsoOpen] = useState(false);
  // The challenge or reason is read once; the address bar forgets it.
  useEffect(() => {
    if (location.hash || location.search) navigate(location.pathname, { replace: true, state: location.state });
  }, [location.hash, location.search, location.pathname, location.state, navigate]);
  useEffect(() => {
    api<SignInOptions>('/api/auth/providers', { session: false }).then(setOptions, () => undefined);
  }, []);
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

  /** Starts a sign-in at a provider: the server sets the flow cookie and names the provider's page. */
  const away = (path: string, body: Record<string, unknown>) =>
    run(async () => {
      const { authorization_url } = await api<{ authorization_url: string }>(path, { method: 'POST', body: { ...body, remember_me: remember }, session: false });
      window.location.assign(authorization_url);
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
      {returned.message && (
        <p className="error" role="alert" data-testid="signin-error">
          {returned.message}
        </p>
      )}
      {returned.notice && (
        <p className="notice" role="status">
          {returned.notice}
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
      <div className="stack">
        <button type="button" className="button" onClick={() => void passkey()} disabled={busy}>
          <KeyRound aria-hidden size={16} /> Sign in with a passkey
        </button>
        {options.providers.map((p) => (
          <button key={p.id} type="button" className="button" onClick={() => void away(`/api/auth/oauth/${p.id}/start`, {})} disabled={busy}>
            Sign in with {p.name}
          </button>
        ))}
        {options.sso && !ssoOpen && (
          <button type="button" className="button" onClick={() => setSsoOpen(true)} disabled={busy}>
            <Building2 aria-hidden size={16} /> Sign in with SSO
          </button>
        )}
        {ssoOpen && (
          <form className="stack" aria-label="Single sign-on" onSubmit={submitHandler(() => void away('/api/auth/sso/start', { email }))}>
            <label className="field">
              <span>Work email</span>
              <input name="sso-email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="username" required />
            </label>
            <button type="submit" className="button" disabled={busy}>
              Continue with SSO
            </button>
          </form>
        )}
      </div>
    </AuthFrame>
  );
}
