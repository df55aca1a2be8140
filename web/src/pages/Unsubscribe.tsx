// Turning a scheduled email report off from the link in the report (/email-reports/unsubscribe?token=…),
// without signing in: the page says which report the link names, and one click turns it off.
// Opening the link changes nothing (mail scanners open links too); mail apps' one-click button
// posts to the API directly (List-Unsubscribe-Post).
import { useEffect, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api } from '../api.ts';
import { useBusyAction } from '../busy.ts';
import { AuthForm, AuthFrame } from './Login.tsx';

interface LinkState {
  subscribed: boolean;
  site_domain: string | null;
  frequency: 'weekly' | 'monthly' | null;
}

export default function Unsubscribe() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [state, setState] = useState<LinkState | null>(null);
  const [loadError, setLoadError] = useState<string | null>(token ? null : 'This link has no unsubscribe token. Open the link from the report again.');
  const [done, setDone] = useState(false);
  const { error, busy, run } = useBusyAction();
  const path = `/api/email-reports/unsubscribe?token=${encodeURIComponent(token)}`;

  useEffect(() => {
    if (!token) return;
    api<LinkState>(path, { session: false }).then(setState, (err: Error) => setLoadError(err.message));
  }, [token, path]);

  if (done || state?.subscribed === false) {
    return (
      <AuthFrame title="Email report turned off">
        <p role="status" data-testid="unsubscribed">
          {done && state?.site_domain ? `You will get no more ${state.frequency} reports of ${state.site_domain}.` : 'This report is already off: you will get no more of it.'}
        </p>
        <p>
          <Link to="/account">Choose your reports in Account</Link>
        </p>
      </AuthFrame>
    );
  }
  const submit = () =>
    void run(async () => {
      await api(path, { method: 'POST', session: false });
      setDone(true);
    });
  return (
    <AuthFrame title="Turn off an email report">
      <AuthForm onSubmit={submit} error={loadError ?? error} busy={busy || !state} submit="Unsubscribe">
        <p className="muted">{state ? `This link turns off your ${state.frequency} report of ${state.site_domain}.` : 'Reading the link…'}</p>
      </AuthForm>
    </AuthFrame>
  );
}
