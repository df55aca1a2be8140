// First run: the first account becomes the instance owner (with a team of its own) and is signed in.
import { useState } from 'react';
import { Navigate, useNavigate } from 'react-router';
import { api, type SignedIn } from '../api.ts';
import { Loading } from '../App.tsx';
import { NewPasswordField } from '../components/NewPasswordField.tsx';
import { useSession } from '../session.tsx';
import { useBusyAction } from '../busy.ts';
import { AuthForm, AuthFrame } from './Login.tsx';

export default function Setup() {
  const session = useSession();
  const navigate = useNavigate();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [remember, setRemember] = useState(false);
  const { error, busy, run } = useBusyAction();

  if (session.status === 'loading') return <Loading />;
  if (session.status === 'signed_in') return <Navigate to="/" replace />;
  if (!session.needsSetup) return <Navigate to="/login" replace />;

  const submit = () =>
    void run(async () => {
      const result = await api<SignedIn>('/api/initial-user', { method: 'POST', body: { email, password, remember_me: remember }, session: false });
      session.signedIn(result);
      navigate('/', { replace: true });
    });

  return (
    <AuthFrame title="Welcome to Plumb">
      <p className="muted">Create the owner account of this instance. You can invite others afterwards.</p>
      <AuthForm onSubmit={submit} error={error} busy={busy} submit="Create owner account">
        <label className="field">
          <span>Email</span>
          <input name="email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="username" required />
        </label>
        <NewPasswordField name="password" value={password} onChange={setPassword} />
        <label className="check">
          <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.target.checked)} />
          <span>Keep me signed in on this device</span>
        </label>
      </AuthForm>
    </AuthFrame>
  );
}
