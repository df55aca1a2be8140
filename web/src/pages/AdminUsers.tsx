// Instance administration, for owners and admins: users (create accounts, change instance roles,
// reset a lost second factor, delete; the server decides who may do what, admins manage plain
// users only) and the plugins the node runs.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type InstanceUser, type Page, problem, type User } from '../api.ts';
import { ListTable } from '../components/ListTable.tsx';
import { NewPasswordField } from '../components/NewPasswordField.tsx';
import { PluginsCard } from '../components/PluginsCard.tsx';
import { RoleField, RoleSelect } from '../components/RoleSelect.tsx';
import { useSession } from '../session.tsx';
import { useTitle } from '../title.ts';
import { submitHandler } from '../forms.ts';

const ROLES: User['role'][] = ['owner', 'admin', 'user'];
const day = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export default function AdminUsers() {
  useTitle('Users');
  const { user: me } = useSession();
  const queries = useQueryClient();
  const users = useQuery({ queryKey: ['admin-users'], queryFn: () => api<Page<InstanceUser>>('/api/admin/users', { query: { limit: 200 } }) });
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<User['role']>('user');
  const refresh = () => void queries.invalidateQueries({ queryKey: ['admin-users'] });
  const create = useMutation({
    mutationFn: () => api('/api/admin/users', { method: 'POST', body: { email: email.trim(), password, role } }),
    onSuccess: () => {
      setEmail('');
      setPassword('');
      refresh();
    },
  });
  const change = useMutation({ mutationFn: (u: { id: string; role: User['role'] }) => api(`/api/admin/users/${u.id}`, { method: 'PATCH', body: { role: u.role } }), onSuccess: refresh });
  const resetMfa = useMutation({ mutationFn: (id: string) => api(`/api/admin/users/${id}/disable-mfa`, { method: 'POST', body: {} }), onSuccess: refresh });
  const remove = useMutation({ mutationFn: (id: string) => api(`/api/admin/users/${id}`, { method: 'DELETE' }), onSuccess: refresh });
  const failure = create.error ?? change.error ?? resetMfa.error ?? remove.error;
  const submit = submitHandler(() => create.mutate());
  return (
    <section className="page">
      <header className="page-head">
        <h1>Users</h1>
      </header>
      <section className="card stack" aria-labelledby="users">
        <h2 id="users">Accounts on this instance</h2>
        {users.isError && <p className="error">{users.error.message}</p>}
        {failure && <p className="error">{problem(failure)}</p>}
        {users.data && (
          <ListTable columns={['Email', 'Role', 'Authenticator app', 'Since']} actions>
            {users.data.items.map((u) => (
              <tr key={u.id}>
                <th scope="row">{u.email}</th>
                <td>
                  <RoleSelect label={`Role of ${u.email}`} roles={ROLES} value={u.role} onChange={(r) => change.mutate({ id: u.id, role: r })} />
                </td>
                <td>{u.totp_enabled ? 'on' : 'off'}</td>
                <td className="nowrap">{day.format(new Date(u.created_at))}</td>
                <td className="actions">
                  {u.totp_enabled && (
                    <button type="button" className="button small" onClick={() => resetMfa.mutate(u.id)}>
                      Reset second factor
                    </button>
                  )}
                  {u.id !== me?.id && (
                    <button
                      type="button"
                      className="button small"
                      onClick={() => {
                        if (confirm(`Delete the account ${u.email}?`)) remove.mutate(u.id);
                      }}
                    >
                      Delete
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </ListTable>
        )}
        <form className="inline-form" onSubmit={submit} aria-label="New account">
          <label className="field inline">
            <span>Email</span>
            <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
          </label>
          <NewPasswordField inline value={password} onChange={setPassword} />
          <RoleField roles={ROLES} value={role} onChange={setRole} />
          <button type="submit" className="button primary" disabled={create.isPending}>
            Create account
          </button>
        </form>
      </section>
      <PluginsCard />
    </section>
  );
}
