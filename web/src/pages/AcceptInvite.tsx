// Accepting a team invitation: choose a password; the new account joins the team and is signed in.
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { api, type SessionAnswer } from '../api.ts';
import { NewPasswordField } from '../components/NewPasswordField.tsx';
import { useSession } from '../session.tsx';
import { useBusyAction } from '../busy.ts';
import { AuthForm, AuthFrame } from './Login.tsx';

export default function AcceptInvite() {
  const { token = '' } = useParams();
  const session = useSession();
  const navigate = useNavigate();
  const [password, setPassword] = useState('');
  const { error, busy, run } = useBusyAction();
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
      <AuthForm onSubmit={submit} error={error} busy={busy} submit="Create account and join">
        <NewPasswordField value={password} onChange={setPassword} />
      </AuthForm>
    </AuthFrame>
  );
}
