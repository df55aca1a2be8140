// Share links of a site: create (optional name, expiry, password, sites allowed to embed it), copy
// the URL shown once, change which sites may embed it, revoke.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type Page, problem, type ShareView } from '../api.ts';
import { CopyButton } from './CopyButton.tsx';
import { ListTable } from './ListTable.tsx';
import { submitHandler } from '../forms.ts';

const day = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

/** Origins as typed: separated by spaces, commas or new lines. */
const originList = (text: string) => text.split(/[\s,]+/).filter((origin) => origin !== '');

/** Which sites may show a link's page in a frame: edited in place on its row. */
function EmbeddingForm({ siteId, link, done }: { siteId: string; link: ShareView; done(): void }) {
  const queries = useQueryClient();
  const [origins, setOrigins] = useState(link.embed_origins.join('\n'));
  const save = useMutation({
    mutationFn: () => api(`/api/sites/${siteId}/share/${link.id}`, { method: 'PATCH', body: { embed_origins: originList(origins) } }),
    onSuccess: () => {
      void queries.invalidateQueries({ queryKey: ['share', siteId] });
      done();
    },
  });
  return (
    <form className="stack" onSubmit={submitHandler(() => save.mutate())} aria-label={`Embedding of ${link.name ?? 'unnamed link'}`}>
      <label className="field">
        <span>Sites allowed to embed this link (one origin per line, e.g. https://blog.example.com; empty: none)</span>
        <textarea name="share-embed-origins" rows={3} value={origins} onChange={(e) => setOrigins(e.target.value)} />
      </label>
      {save.isError && <p className="error">{problem(save.error)}</p>}
      <div className="inline-form">
        <button type="submit" className="button small primary" disabled={save.isPending}>
          Save embedding
        </button>
        <button type="button" className="button small" onClick={done}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function ShareLinks({ siteId }: { siteId: string }) {
  const queries = useQueryClient();
  const links = useQuery({ queryKey: ['share', siteId], queryFn: () => api<Page<ShareView>>(`/api/sites/${siteId}/share`, { query: { limit: 200 } }) });
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const [password, setPassword] = useState('');
  const [embedOrigins, setEmbedOrigins] = useState('');
  const [editing, setEditing] = useState<string | null>(null);
  const [created, setCreated] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: () =>
      api<{ token: string }>(`/api/sites/${siteId}/share`, {
        method: 'POST',
        body: { name: name.trim() || null, expires_at: expires ? new Date(`${expires}T23:59:59`).toISOString() : null, password: password || null, embed_origins: originList(embedOrigins) },
      }),
    onSuccess: (r) => {
      setCreated(`${window.location.origin}/share/${r.token}`);
      setName('');
      setExpires('');
      setPassword('');
      setEmbedOrigins('');
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
        <label className="field inline">
          <span>Embeddable by (optional)</span>
          <input name="share-embed-origins" value={embedOrigins} onChange={(e) => setEmbedOrigins(e.target.value)} placeholder="https://blog.example.com" />
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
        <ListTable columns={['Name', 'Created', 'Expires', 'Password', 'Embeddable by']} actions>
          {links.data.items.map((l) =>
            editing === l.id ? (
              <tr key={l.id}>
                <th scope="row">{l.name ?? 'Unnamed link'}</th>
                <td colSpan={5}>
                  <EmbeddingForm siteId={siteId} link={l} done={() => setEditing(null)} />
                </td>
              </tr>
            ) : (
            <tr key={l.id}>
              <th scope="row">{l.name ?? 'Unnamed link'}</th>
              <td className="nowrap">{day.format(new Date(l.created_at))}</td>
              <td className="nowrap">{l.expires_at ? day.format(new Date(l.expires_at)) : 'Never'}</td>
              <td>{l.has_password ? 'Yes' : 'No'}</td>
              <td>{l.embed_origins.length > 0 ? l.embed_origins.join(', ') : 'No site'}</td>
              <td>
                <button type="button" className="button small" onClick={() => setEditing(l.id)}>
                  Embedding
                </button>{' '}
                <button type="button" className="button small" onClick={() => revoke.mutate(l.id)}>
                  Revoke
                </button>
              </td>
            </tr>
            ),
          )}
        </ListTable>
      )}
    </div>
  );
}
