// Asking for a password reset link by mail. The answer is the same whether or not the address has
// an account, and so is what this page says afterwards.
import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../api.ts';
import { useBusyAction } from '../busy.ts';
import { AuthForm, AuthFrame } from './Login.tsx';

export default function ForgotPassword() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const { error, busy, run } = useBusyAction();
  const submit = () =>
    void run(async () => {
      await api('/api/auth/forgot-password', { method: 'POST', body: { email }, session: false });
      setSent(true);
    });
  if (sent) {
    return (
      <AuthFrame title="Check your mail">
        <p role="status" data-testid="forgot-sent">
          If <strong>{email}</strong> belongs to an account, a link to choose a new password is on its way. It works once, for one hour.
        </p>
        <p>
          <Link to="/login">Back to sign in</Link>
        </p>
      </AuthFrame>
    );
  }
  return (
    <AuthFrame title="Forgot password">
      <p className="muted">Enter the email address of your account. We will send you a link to choose a new password.</p>
      <AuthForm
        onSubmit={submit}
        error={error}
        busy={busy}
        submit="Send reset link"
        after={
          <p className="muted">
            <Link to="/login">Back to sign in</Link>
          </p>
        }
      >
        <label className="field">
          <span>Email</span>
          <input name="email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="username" required />
        </label>
      </AuthForm>
    </AuthFrame>
  );
}
