// The sign-in providers of the signed-in person (Account → Sign-in providers): every provider the
// instance enabled, linked or not, with link and unlink. Linking leaves for the provider's page and
// comes back to /account with ?linked=… or ?link_error=…; unlinking the last way in is refused.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, problem } from '../api.ts';

interface LinkedProviders {
  providers: { id: string; name: string; enabled: boolean; identity: { email: string; created_at: string; last_used_at: string | null } | null }[];
}

const LINK_ERRORS: Record<string, string> = {
  identity_in_use: 'That account at the provider is already linked to another Plumb account.',
  provider_already_linked: 'Another account at that provider is already linked; unlink it first.',
  session_changed: 'You were signed in as someone else when the provider sent you back. Try again.',
  email_unverified: 'The provider did not confirm a verified email address.',
  state_invalid: 'The link expired or was started in another browser. Try again.',
};

const day = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export function SignInProviders() {
  const queries = useQueryClient();
  const linked = useQuery({ queryKey: ['sign-in-providers'], queryFn: () => api<LinkedProviders>('/api/user/security/providers') });
  // What the provider's return left in the address bar; the address forgets it once it is shown.
  const [returned] = useState(() => {
    const query = new URLSearchParams(window.location.search);
    const failed = query.get('link_error');
    return { linked: query.get('linked'), error: failed ? (LINK_ERRORS[failed] ?? 'The provider could not be linked.') : null };
  });
  const shown = linked.data !== undefined;
  useEffect(() => {
    if (shown && (returned.linked || returned.error)) window.history.replaceState(window.history.state, '', window.location.pathname);
  }, [shown, returned]);
  const link = useMutation({
    mutationFn: async (id: string) => {
      const { authorization_url } = await api<{ authorization_url: string }>(`/api/user/security/providers/${id}/link`, { method: 'POST', body: {} });
      window.location.assign(authorization_url);
    },
  });
  const unlink = useMutation({
    mutationFn: (id: string) => api(`/api/user/security/providers/${id}`, { method: 'DELETE' }),
    onSuccess: () => void queries.invalidateQueries({ queryKey: ['sign-in-providers'] }),
  });
  const failure = link.error ?? unlink.error;
  if (!linked.data) return <p className="muted">Loading…</p>;
  if (linked.data.providers.length === 0) return <p className="muted">This instance offers no other sign-in providers.</p>;
  return (
    <div className="stack">
      {returned.linked && (
        <p className="notice" role="status">
          The provider is linked: you can sign in with it now.
        </p>
      )}
      {returned.error && (
        <p className="error" role="alert">
          {returned.error}
        </p>
      )}
      <ul className="plain-list" aria-label="Sign-in providers">
        {linked.data.providers.map((p) => (
          <li key={p.id}>
            <strong>{p.name}</strong>{' '}
            {p.identity ? (
              <>
                <span className="muted">
                  {p.identity.email} · linked {day.format(new Date(p.identity.created_at))}
                  {!p.enabled && ' · switched off on this instance'}
                </span>{' '}
                <button type="button" className="button small" onClick={() => unlink.mutate(p.id)} disabled={unlink.isPending}>
                  Unlink {p.name}
                </button>
              </>
            ) : (
              <button type="button" className="button small" onClick={() => link.mutate(p.id)} disabled={link.isPending}>
                Link {p.name}
              </button>
            )}
          </li>
        ))}
      </ul>
      {failure && (
        <p className="error" role="alert">
          {problem(failure)}
        </p>
      )}
    </div>
  );
}
