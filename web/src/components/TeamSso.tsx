// A team's single sign-on (Team settings, owners and admins): the OpenID provider's issuer, client
// id and secret (write-only: the server never shows it again), the email domains it answers for,
// and just-in-time membership; a check of the discovery document, and disconnecting.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, problem } from '../api.ts';
import { submitHandler } from '../forms.ts';

interface Connection {
  issuer: string;
  client_id: string;
  client_secret_set: boolean;
  allowed_domains: string[];
  jit_enabled: boolean;
  updated_at: string;
}

interface TestResult {
  ok: boolean;
  message: string;
}

export function TeamSso({ teamId }: { teamId: string }) {
  const queries = useQueryClient();
  const current = useQuery({ queryKey: ['sso', teamId], queryFn: () => api<{ sso: Connection | null }>(`/api/teams/${teamId}/sso`) });
  const [issuer, setIssuer] = useState('');
  const [clientId, setClientId] = useState('');
  const [secret, setSecret] = useState('');
  const [domains, setDomains] = useState('');
  const [jit, setJit] = useState(false);
  const [tested, setTested] = useState<TestResult | null>(null);
  const sso = current.data?.sso;
  useEffect(() => {
    if (!sso) return;
    setIssuer(sso.issuer);
    setClientId(sso.client_id);
    setDomains(sso.allowed_domains.join(', '));
    setJit(sso.jit_enabled);
  }, [sso]);
  const refresh = () => {
    setSecret('');
    void queries.invalidateQueries({ queryKey: ['sso', teamId] });
    void queries.invalidateQueries({ queryKey: ['audit', teamId] });
  };
  const save = useMutation({
    mutationFn: () =>
      api(`/api/teams/${teamId}/sso`, {
        method: 'PUT',
        body: {
          issuer: issuer.trim(),
          client_id: clientId.trim(),
          client_secret: secret === '' ? undefined : secret,
          allowed_domains: domains
            .split(/[\s,]+/)
            .map((d) => d.trim())
            .filter(Boolean),
          jit_enabled: jit,
        },
      }),
    onSuccess: refresh,
  });
  const test = useMutation({
    mutationFn: () => api<TestResult>(`/api/teams/${teamId}/sso/test`, { method: 'POST', body: { issuer: issuer.trim() || undefined } }),
    onSuccess: setTested,
  });
  const remove = useMutation({ mutationFn: () => api(`/api/teams/${teamId}/sso`, { method: 'DELETE' }), onSuccess: refresh });
  const failure = save.error ?? test.error ?? remove.error;
  if (current.isPending) return <p className="muted">Loading…</p>;
  return (
    <form className="stack" aria-label="Single sign-on" onSubmit={submitHandler(() => save.mutate())}>
      <p className="muted">
        {sso ? 'Members can sign in with the team’s identity provider: “Sign in with SSO” on the login page.' : 'Not connected. Register Plumb at your OpenID provider, then connect it here.'}
      </p>
      <label className="field">
        <span>Issuer URL</span>
        <input name="issuer" type="url" value={issuer} onChange={(e) => setIssuer(e.target.value)} placeholder="https://idp.example.com" required />
      </label>
      <label className="field">
        <span>Client id</span>
        <input name="client_id" value={clientId} onChange={(e) => setClientId(e.target.value)} required />
      </label>
      <label className="field">
        <span>Client secret{sso ? ' (leave empty to keep the stored one)' : ''}</span>
        <input name="client_secret" type="password" value={secret} onChange={(e) => setSecret(e.target.value)} autoComplete="off" required={!sso} />
      </label>
      <label className="field">
        <span>Allowed email domains (comma-separated)</span>
        <input name="allowed_domains" value={domains} onChange={(e) => setDomains(e.target.value)} placeholder="example.com" required />
      </label>
      <label className="check">
        <input type="checkbox" name="jit_enabled" checked={jit} onChange={(e) => setJit(e.target.checked)} />
        <span>Just-in-time membership: people without an account join as members at their first sign-in</span>
      </label>
      {tested && (
        <p className={tested.ok ? 'notice' : 'error'} role="status">
          {tested.message}
        </p>
      )}
      {failure && (
        <p className="error" role="alert">
          {problem(failure)}
        </p>
      )}
      <div className="inline-form">
        <button type="submit" className="button primary" disabled={save.isPending}>
          {sso ? 'Save single sign-on' : 'Connect single sign-on'}
        </button>
        <button type="button" className="button" onClick={() => test.mutate()} disabled={test.isPending || (!issuer && !sso)}>
          Test discovery
        </button>
        {sso && (
          <button type="button" className="button" onClick={() => remove.mutate()} disabled={remove.isPending}>
            Disconnect
          </button>
        )}
      </div>
    </form>
  );
}
