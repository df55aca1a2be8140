// Choosing a new password from the link of a reset mail (/reset-password?token=…). Every session of
// the account ends; the person then signs in with the new password.
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api } from '../api.ts';
import { useBusyAction } from '../busy.ts';
import { NewPasswordField } from '../components/NewPasswordField.tsx';
import { AuthForm, AuthFrame } from './Login.tsx';

export default function ResetPassword() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const { error, busy, run } = useBusyAction();
  const submit = () =>
    void run(async () => {
      await api('/api/auth/reset-password', { method: 'POST', body: { token, password }, session: false });
      setDone(true);
    });
  if (done) {
    return (
      <AuthFrame title="Password changed">
        <p role="status" data-testid="reset-done">
          Your password was changed and every session of your account was signed out.
        </p>
        <p>
          <Link to="/login" className="button primary">
            Sign in
          </Link>
        </p>
      </AuthFrame>
    );
  }
  if (!token) {
    return (
      <AuthFrame title="Choose a new password">
        <p className="error" role="alert">
          This link has no reset token. Open the link from the mail again, or ask for a new one.
        </p>
        <p>
          <Link to="/forgot-password">Ask for a new link</Link>
        </p>
      </AuthFrame>
    );
  }
  return (
    <AuthFrame title="Choose a new password">
      <AuthForm
        onSubmit={submit}
        error={error}
        busy={busy}
        submit="Set password"
        after={
          <p className="muted">
            Link expired? <Link to="/forgot-password">Ask for a new one</Link>
          </p>
        }
      >
        <NewPasswordField value={password} onChange={setPassword} name="password" />
      </AuthForm>
    </AuthFrame>
  );
}
