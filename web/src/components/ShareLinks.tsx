// Share links of a site: create (optional name, expiry, password), copy the URL shown once, revoke.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type Page, problem, type ShareView } from '../api.ts';
import { CopyButton } from './CopyButton.tsx';
import { ListTable } from './ListTable.tsx';
import { submitHandler } from '../forms.ts';

const day = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export function ShareLinks({ siteId }: { siteId: string }) {
  const queries = useQueryClient();
  const links = useQuery({ queryKey: ['share', siteId], queryFn: () => api<Page<ShareView>>(`/api/sites/${siteId}/share`, { query: { limit: 200 } }) });
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const [password, setPassword] = useState('');
  const [created, setCreated] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: () =>
      api<{ token: string }>(`/api/sites/${siteId}/share`, {
        method: 'POST',
        body: { name: name.trim() || null, expires_at: expires ? new Date(`${expires}T23:59:59`).toISOString() : null, password: password || null },
      }),
    onSuccess: (r) => {
      setCreated(`${window.location.origin}/share/${r.token}`);
      setName('');
      setExpires('');
      setPassword('');
      void queries.invalidateQueries({ queryKey: ['share', siteId] });
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => api(`/api/sites/${siteId}/share/${id}`, { method: 'DELETE' }),
    onSuccess: () => void queries.invalidateQueries({ queryKey: ['share', siteId] }),
  });
  const submit = submitHandler(() => create.mutate());
  return (
    <div className="stack">
      <form className="inline-form" onSubmit={submit} aria-label="New share link">
        <label className="field inline">
          <span>Name (optional)</span>
          <input name="share-name" value={name} onChange={(e) => setName(e.target.value)} maxLength={120} />
        </label>
        <label className="field inline">
          <span>Expires (optional)</span>
          <input name="share-expires" type="date" value={expires} onChange={(e) => setExpires(e.target.value)} />
        </label>
        <label className="field inline">
          <span>Password (optional)</span>
          <input name="share-password" type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="new-password" />
        </label>
        <button type="submit" className="button primary" disabled={create.isPending}>
          Create share link
        </button>
      </form>
      {create.isError && <p className="error">{problem(create.error)}</p>}
      {created && (
        <div className="notice" role="status">
          <p>Copy the link now; it is not shown again.</p>
          <div className="copy-row">
            <input className="code-input" readOnly value={created} aria-label="New share link" data-testid="share-url" onFocus={(e) => e.target.select()} />
            <CopyButton text={created} label="Copy link" />
          </div>
        </div>
      )}
      {links.data && links.data.items.length > 0 && (
        <ListTable columns={['Name', 'Created', 'Expires', 'Password']} actions>
          {links.data.items.map((l) => (
            <tr key={l.id}>
              <th scope="row">{l.name ?? 'Unnamed link'}</th>
              <td>{day.format(new Date(l.created_at))}</td>
              <td>{l.expires_at ? day.format(new Date(l.expires_at)) : 'Never'}</td>
              <td>{l.has_password ? 'Yes' : 'No'}</td>
              <td>
                <button type="button" className="button small" onClick={() => revoke.mutate(l.id)}>
                  Revoke
                </button>
              </td>
            </tr>
          ))}
        </ListTable>
      )}
    </div>
  );
}
