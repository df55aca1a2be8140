// Accepting a team invitation from its link. Signed in as the invited email, one click joins the
// team; without an account, choosing a password creates it, joins and signs in. Someone who has an
// account but is signed out signs in first and comes back here. A new account can also come from a
// sign-in provider the instance offers, when its address is the invited one.
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { Loading } from '../App.tsx';
import { api, type SessionAnswer } from '../api.ts';
import { NewPasswordField } from '../components/NewPasswordField.tsx';
import { useSession } from '../session.tsx';
import { useBusyAction } from '../busy.ts';
import { AuthForm, AuthFrame } from './Login.tsx';

export default function AcceptInvite() {
  const { token = '' } = useParams();
  const session = useSession();
  const navigate = useNavigate();
  const queries = useQueryClient();
  const [password, setPassword] = useState('');
  const { error, busy, run } = useBusyAction();
  const [providers, setProviders] = useState<{ id: string; name: string }[]>([]);
  useEffect(() => {
    api<{ providers: { id: string; name: string }[] }>('/api/auth/providers', { session: false }).then((o) => setProviders(o.providers), () => undefined);
  }, []);
  if (session.status === 'loading') return <Loading />;

  if (session.status === 'signed_in' && session.user) {
    const join = () =>
      void run(async () => {
        await api('/api/auth/accept-invite', { method: 'POST', body: { token } });
        void queries.invalidateQueries({ queryKey: ['teams'] });
        void queries.invalidateQueries({ queryKey: ['sites'] });
        navigate('/', { replace: true });
      });
    return (
      <AuthFrame title="Join your team">
        <p className="muted">
          You are signed in as <strong>{session.user.email}</strong>. Accept the invitation to join the team with this account.
        </p>
        <AuthForm onSubmit={join} error={error} busy={busy} submit="Accept and join">
          {null}
        </AuthForm>
      </AuthFrame>
    );
  }

  const submit = () =>
    void run(async () => {
      await api('/api/auth/accept-invite', { method: 'POST', body: { token, password }, session: false });
      // The answer carries the user but not the session's expiry, which the countdown needs.
      const { user, ...current } = await api<SessionAnswer>('/api/auth/session', { session: false });
      session.signedIn({ status: 'ok', user, session: current });
      navigate('/', { replace: true });
    });
  return (
    <AuthFrame title="Join your team">
      <p className="muted">Choose a password for your new account.</p>
      <AuthForm
        onSubmit={submit}
        error={error}
        busy={busy}
        submit="Create account and join"
        after={
          <p className="muted">
            Already have an account with this email?{' '}
            <Link to="/login" state={{ from: `/invite/${token}` }}>
              Sign in to accept
            </Link>
          </p>
        }
      >
        <NewPasswordField value={password} onChange={setPassword} />
      </AuthForm>
      {providers.length > 0 && (
        <div className="stack">
          <div className="divider">
            <span>or</span>
          </div>
          {providers.map((p) => (
            <button
              key={p.id}
              type="button"
              className="button"
              disabled={busy}
              onClick={() =>
                void run(async () => {
                  const { authorization_url } = await api<{ authorization_url: string }>(`/api/auth/oauth/${p.id}/start`, { method: 'POST', body: { invite_token: token }, session: false });
                  window.location.assign(authorization_url);
                })
              }
            >
              Join with {p.name}
            </button>
          ))}
        </div>
      )}
    </AuthFrame>
  );
}
