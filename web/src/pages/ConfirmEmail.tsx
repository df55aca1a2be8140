// Confirming a new email address from the link of a confirmation mail (/confirm-email?token=…):
// one click moves the account to the address the mail was sent to.
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, type User } from '../api.ts';
import { useBusyAction } from '../busy.ts';
import { useSession } from '../session.tsx';
import { AuthForm, AuthFrame } from './Login.tsx';

export default function ConfirmEmail() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const session = useSession();
  const queries = useQueryClient();
  const [confirmed, setConfirmed] = useState<string | null>(null);
  const { error, busy, run } = useBusyAction();
  const submit = () =>
    void run(async () => {
      const user = await api<User>('/api/user/email/confirm', { method: 'POST', body: { token }, session: false });
      setConfirmed(user.email);
      session.refresh();
      void queries.invalidateQueries();
    });
  if (confirmed) {
    return (
      <AuthFrame title="Email address changed">
        <p role="status" data-testid="email-confirmed">
          Your account now uses <strong>{confirmed}</strong>. Sign in with it from now on.
        </p>
        <p>
          <Link to="/">Continue</Link>
        </p>
      </AuthFrame>
    );
  }
  return (
    <AuthFrame title="Confirm your new email address">
      <AuthForm onSubmit={submit} error={token ? error : 'This link has no confirmation token. Open the link from the mail again.'} busy={busy || !token} submit="Confirm this address">
        <p className="muted">Confirm to move your account to the address this link was sent to.</p>
      </AuthForm>
    </AuthFrame>
  );
}
