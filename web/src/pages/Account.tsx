// The signed-in person's account: password, email address (when the instance sends mail), two-factor
// authentication (TOTP with recovery codes), passkeys, linked sign-in providers, and API clients.
import { startRegistration } from '@simplewebauthn/browser';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Download } from 'lucide-react';
import { type ReactNode, useState } from 'react';
import { api, type ApiClientView, type Page, type PasskeyView, problem, type Site } from '../api.ts';
import { CopyButton, downloadText } from '../components/CopyButton.tsx';
import { EmailReports } from '../components/EmailReports.tsx';
import { ListTable } from '../components/ListTable.tsx';
import { SignInProviders } from '../components/SignInProviders.tsx';
import { TakeoutDownload } from '../components/Takeout.tsx';
import { useSession } from '../session.tsx';
import { useTitle } from '../title.ts';
import { submitHandler } from '../forms.ts';

interface Security {
  totp_enabled: boolean;
  recovery_codes_left: number;
  passkeys: number;
  has_password: boolean;
}

const day = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

function Section({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <section className="card stack" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** The recovery codes as a text file: whose they are and when they were made at the top, then one code per line. */
function recoveryCodesFile(email: string, codes: string[], at = new Date()): string {
  const date = at.toLocaleDateString('en-CA');
  return [`Plumb recovery codes for ${email}`, `Created ${date}. Each code signs you in once, instead of a code from your authenticator app.`, '', ...codes, ''].join('\n');
}

function RecoveryCodes({ codes }: { codes: string[] }) {
  const { user } = useSession();
  const email = user?.email ?? '';
  return (
    <div className="notice" role="status">
      <p>Store these one-time recovery codes somewhere safe. They are shown only now.</p>
      <ul className="codes" data-testid="recovery-codes">
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <div className="form-actions">
        <CopyButton text={codes.join('\n')} label="Copy codes" className="button small" />
        <button type="button" className="button small" onClick={() => downloadText('plumb-recovery-codes.txt', recoveryCodesFile(email, codes))}>
          <Download aria-hidden size={16} /> Download as a text file
        </button>
      </div>
    </div>
  );
}

function Totp({ security }: { security: Security }) {
  const queries = useQueryClient();
  const [setup, setSetup] = useState<{ secret: string; qr_svg: string } | null>(null);
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<string[] | null>(null);
  const done = () => {
    setCode('');
    void queries.invalidateQueries({ queryKey: ['security'] });
  };
  const start = useMutation({
    mutationFn: () => api<{ secret: string; qr_svg: string }>('/api/user/security/totp/setup/start', { method: 'POST', body: {} }),
    onSuccess: (r) => setSetup(r),
  });
  const verify = useMutation({
    mutationFn: () => api<{ recovery_codes: string[] }>('/api/user/security/totp/setup/verify', { method: 'POST', body: { code: code.trim() } }),
    onSuccess: (r) => {
      setSetup(null);
      setCodes(r.recovery_codes);
      done();
    },
  });
  const disable = useMutation({
    mutationFn: () => api('/api/user/security/totp/disable', { method: 'POST', body: { code: code.trim() } }),
    onSuccess: () => {
      setCodes(null);
      done();
    },
  });
  const regenerate = useMutation({
    mutationFn: () => api<{ recovery_codes: string[] }>('/api/user/security/recovery-codes/regenerate', { method: 'POST', body: { code: code.trim() } }),
    onSuccess: (r) => {
      setCodes(r.recovery_codes);
      done();
    },
  });
  const failure = start.error ?? verify.error ?? disable.error ?? regenerate.error;
  const codeField = (
    <label className="field inline">
      <span>Code from your app</span>
      <input value={code} onChange={(e) => setCode(e.target.value)} inputMode="numeric" autoComplete="one-time-code" required />
    </label>
  );

  return (
    <div className="stack">
      <p>
        Authenticator app: <strong>{security.totp_enabled ? 'on' : 'off'}</strong>
        {security.totp_enabled && <span className="muted"> · {security.recovery_codes_left} recovery codes left</span>}
      </p>
      {codes && <RecoveryCodes codes={codes} />}
      {failure && <p className="error">{problem(failure)}</p>}
      {!security.totp_enabled && !setup && (
        <button type="button" className="button" onClick={() => start.mutate()} disabled={start.isPending}>
          Set up an authenticator app
        </button>
      )}
      {setup && (
        <form className="stack" onSubmit={submitHandler(() => verify.mutate())}>
          <p>Scan this code with your authenticator app, or enter the key by hand, then type the code it shows.</p>
          {/* The QR code is an SVG drawn by the server; it makes no request. */}
          {/* biome-ignore lint/security/noDangerouslySetInnerHtml: server-generated QR SVG, no user input */}
          <div className="qr" role="img" aria-label="QR code of the authenticator key" dangerouslySetInnerHTML={{ __html: setup.qr_svg }} />
          <p>
            Key: <code>{setup.secret}</code>
          </p>
          {codeField}
          <button type="submit" className="button primary" disabled={verify.isPending}>
            Turn on
          </button>
        </form>
      )}
      {security.totp_enabled && (
        <form className="inline-form" onSubmit={submitHandler(() => regenerate.mutate())}>
          {codeField}
          <button type="submit" className="button">
            New recovery codes
          </button>
          <button type="button" className="button danger" onClick={() => code && disable.mutate()}>
            Turn off
          </button>
        </form>
      )}
    </div>
  );
}

function Passkeys() {
  const queries = useQueryClient();
  const passkeys = useQuery({ queryKey: ['passkeys'], queryFn: () => api<Page<PasskeyView>>('/api/user/security/passkeys', { query: { limit: 100 } }) });
  const [name, setName] = useState('');
  const refresh = () => {
    void queries.invalidateQueries({ queryKey: ['passkeys'] });
    void queries.invalidateQueries({ queryKey: ['security'] });
  };
  const register = useMutation({
    mutationFn: async () => {
      const { options, challenge_token } = await api<{ options: Parameters<typeof startRegistration>[0]['optionsJSON']; challenge_token: string }>(
        '/api/user/security/passkeys/register/start',
        { method: 'POST', body: {} },
      );
      const response = await startRegistration({ optionsJSON: options });
      return api('/api/user/security/passkeys/register/finish', { method: 'POST', body: { challenge_token, response, name: name.trim() || undefined } });
    },
    onSuccess: () => {
      setName('');
      refresh();
    },
  });
  const remove = useMutation({ mutationFn: (id: string) => api(`/api/user/security/passkeys/${id}`, { method: 'DELETE' }), onSuccess: refresh });
  const rename = useMutation({
    mutationFn: (p: { id: string; name: string }) => api(`/api/user/security/passkeys/${p.id}`, { method: 'PATCH', body: { name: p.name } }),
    onSuccess: refresh,
  });
  const submit = submitHandler(() => register.mutate());
  const failure = register.error ?? remove.error ?? rename.error;
  return (
    <div className="stack">
      {passkeys.data && passkeys.data.items.length === 0 && <p className="muted">No passkeys yet.</p>}
      {passkeys.data && passkeys.data.items.length > 0 && (
        <ul className="plain-list">
          {passkeys.data.items.map((p) => (
            <li key={p.id}>
              <strong>{p.name}</strong> <span className="muted">added {day.format(new Date(p.created_at))}</span>{' '}
              <button
                type="button"
                className="button small"
                onClick={() => {
                  const next = prompt('New name for this passkey', p.name)?.trim();
                  if (next) rename.mutate({ id: p.id, name: next });
                }}
              >
                Rename
              </button>{' '}
              <button type="button" className="button small" onClick={() => remove.mutate(p.id)}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      {failure && <p className="error">{problem(failure)}</p>}
      <form className="inline-form" onSubmit={submit}>
        <label className="field inline">
          <span>Name (optional)</span>
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={64} placeholder="Laptop" />
        </label>
        <button type="submit" className="button" disabled={register.isPending}>
          Add a passkey
        </button>
      </form>
    </div>
  );
}

function Password() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const change = useMutation({
    mutationFn: () => api('/api/user/password', { method: 'POST', body: { current_password: current, new_password: next } }),
    onSuccess: () => {
      setCurrent('');
      setNext('');
    },
  });
  const submit = submitHandler(() => change.mutate());
  return (
    <form className="inline-form" onSubmit={submit}>
      <label className="field inline">
        <span>Current password</span>
        <input type="password" value={current} onChange={(e) => setCurrent(e.target.value)} autoComplete="current-password" required />
      </label>
      <label className="field inline">
        <span>New password</span>
        <input type="password" minLength={10} value={next} onChange={(e) => setNext(e.target.value)} autoComplete="new-password" required />
      </label>
      <button type="submit" className="button" disabled={change.isPending}>
        Change password
      </button>
      {change.isError && <p className="error">{problem(change.error)}</p>}
      {change.isSuccess && <p role="status">Password changed. Other sessions were signed out.</p>}
    </form>
  );
}

/** A new address takes effect once confirmed from the link mailed to it. */
function EmailAddress() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const change = useMutation({
    mutationFn: () => api<{ email: string }>('/api/user/email', { method: 'POST', body: { email, password } }),
    onSuccess: () => setPassword(''),
  });
  const submit = submitHandler(() => change.mutate());
  return (
    <form className="inline-form" onSubmit={submit}>
      <label className="field inline">
        <span>New email address</span>
        <input name="new-email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="email" required />
      </label>
      <label className="field inline">
        <span>Current password</span>
        <input name="email-password" type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="current-password" required />
      </label>
      <button type="submit" className="button" disabled={change.isPending}>
        Change email
      </button>
      {change.isError && <p className="error">{problem(change.error)}</p>}
      {change.isSuccess && <p role="status">A confirmation link was sent to {change.data.email}. Your address changes when you open it (within 24 hours).</p>}
    </form>
  );
}

function ApiClients() {
  const queries = useQueryClient();
  const clients = useQuery({ queryKey: ['api-clients'], queryFn: () => api<Page<ApiClientView>>('/api/user/api-clients', { query: { limit: 200 } }) });
  const sites = useQuery({ queryKey: ['sites'], queryFn: () => api<Page<Site>>('/api/sites', { query: { limit: 200 } }) });
  // Plumb's own scopes, then those the node's plugins declare.
  const offered = useQuery({ queryKey: ['api-scopes'], queryFn: () => api<{ scopes: { name: string; description: string }[] }>('/api/user/api-clients/scopes') });
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['stats:read']);
  const [siteIds, setSiteIds] = useState<string[]>([]);
  const [expires, setExpires] = useState('');
  const [token, setToken] = useState<string | null>(null);
  const refresh = () => void queries.invalidateQueries({ queryKey: ['api-clients'] });
  const create = useMutation({
    mutationFn: () =>
      api<{ token: string }>('/api/user/api-clients', {
        method: 'POST',
        body: {
          name: name.trim(),
          scopes,
          // Writing (ingest, AI fetches, a plugin's :write scope) needs the editor role on the site.
          sites: siteIds.map((site_id) => ({ site_id, role: scopes.some((scope) => scope.endsWith(':write')) ? 'editor' : 'viewer' })),
          ...(expires ? { expires_at: new Date(`${expires}T23:59:59`).toISOString() } : {}),
        },
      }),
    onSuccess: (r) => {
      setToken(r.token);
      setName('');
      refresh();
    },
  });
  const rotate = useMutation({
    mutationFn: (id: string) => api<{ token: string }>(`/api/user/api-clients/${id}/rotate`, { method: 'POST', body: {} }),
    onSuccess: (r) => {
      setToken(r.token);
      refresh();
    },
  });
  const remove = useMutation({ mutationFn: (id: string) => api(`/api/user/api-clients/${id}`, { method: 'DELETE' }), onSuccess: refresh });
  const toggle = (list: string[], value: string) => (list.includes(value) ? list.filter((v) => v !== value) : [...list, value]);
  const domain = new Map((sites.data?.items ?? []).map((s) => [s.id, s.domain]));
  const submit = submitHandler(() => create.mutate());
  const failure = create.error ?? rotate.error ?? remove.error;
  return (
    <div className="stack">
      {token && (
        <div className="notice" role="status">
          <p>Copy the token now; it is not shown again.</p>
          <div className="copy-row">
            <input className="code-input" readOnly value={token} aria-label="API token" onFocus={(e) => e.target.select()} />
            <CopyButton text={token} label="Copy token" />
          </div>
        </div>
      )}
      {failure && <p className="error">{problem(failure)}</p>}
      {clients.data && clients.data.items.length > 0 && (
        <ListTable columns={['Name', 'Scopes', 'Sites', 'Last used']} actions>
          {clients.data.items.map((c) => (
            <tr key={c.id}>
              <th scope="row">{c.name}</th>
              <td>{c.scopes.join(', ')}</td>
              <td>{c.sites.map((s) => `${domain.get(s.site_id) ?? s.site_id} (${s.role})`).join(', ') || '–'}</td>
              <td className="nowrap">{c.last_used_at ? day.format(new Date(c.last_used_at)) : 'Never'}</td>
              <td className="actions">
                <button type="button" className="button small" onClick={() => rotate.mutate(c.id)}>
                  Rotate
                </button>
                <button type="button" className="button small" onClick={() => remove.mutate(c.id)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      <form className="stack" onSubmit={submit} aria-label="New API client">
        <label className="field">
          <span>Name</span>
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={120} />
        </label>
        <fieldset className="checks">
          <legend>Scopes</legend>
          {(offered.data?.scopes ?? []).map((s) => (
            <label key={s.name} className="check" title={s.description}>
              <input type="checkbox" checked={scopes.includes(s.name)} onChange={() => setScopes(toggle(scopes, s.name))} />
              <span>{s.name}</span>
            </label>
          ))}
        </fieldset>
        {sites.data && sites.data.items.length > 0 && (
          <fieldset className="checks">
            <legend>Sites</legend>
            {sites.data.items.map((s) => (
              <label key={s.id} className="check">
                <input type="checkbox" checked={siteIds.includes(s.id)} onChange={() => setSiteIds(toggle(siteIds, s.id))} />
                <span>{s.domain}</span>
              </label>
            ))}
          </fieldset>
        )}
        <label className="field">
          <span>Expires (optional)</span>
          <input type="date" value={expires} onChange={(e) => setExpires(e.target.value)} />
        </label>
        <button type="submit" className="button primary" disabled={create.isPending || scopes.length === 0}>
          Create API client
        </button>
      </form>
    </div>
  );
}

export default function Account() {
  const { user, mailConfigured } = useSession();
  useTitle('Account');
  const security = useQuery({ queryKey: ['security'], queryFn: () => api<Security>('/api/user/security') });
  return (
    <section className="page">
      <header className="page-head">
        <h1>Account</h1>
        <p className="muted">
          {user?.email} · instance {user?.role}
        </p>
      </header>
      <div className="stack">
        <Section id="password" title="Password">
          <Password />
        </Section>
        {mailConfigured && (
          <Section id="email" title="Email address">
            <EmailAddress />
          </Section>
        )}
        {mailConfigured && (
          <Section id="email-reports" title="Email reports">
            <EmailReports />
          </Section>
        )}
        <Section id="two-factor" title="Two-factor authentication">
          {security.data ? <Totp security={security.data} /> : <p className="muted">Loading…</p>}
        </Section>
        <Section id="passkeys" title="Passkeys">
          <Passkeys />
        </Section>
        <Section id="sign-in-providers" title="Sign-in providers">
          <SignInProviders />
        </Section>
        <Section id="api-clients" title="API clients">
          <ApiClients />
        </Section>
        <Section id="takeout" title="Your data">
          <TakeoutDownload
            route="/api/user/takeout"
            label="Download my account data"
            description="What Plumb holds about you: your profile, your teams and sites with your role in each, your API clients (without their tokens), how you sign in (without passwords, secrets or keys) and the audit entries about you."
          />
        </Section>
      </div>
    </section>
  );
}
