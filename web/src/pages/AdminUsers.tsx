// Instance users, for owners and admins: create accounts, change instance roles, reset a lost
// second factor, delete. The server decides who may do what (admins manage plain users only).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Page, problem, type User } from '../api.ts';
import { useSession } from '../session.tsx';
import { useTitle } from '../title.ts';

interface InstanceUser extends User {
  totp_enabled: boolean;
  created_at: string;
}

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
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
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
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Authenticator app</th>
                <th scope="col">Since</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {users.data.items.map((u) => (
                <tr key={u.id}>
                  <th scope="row">{u.email}</th>
                  <td>
                    <select aria-label={`Role of ${u.email}`} value={u.role} onChange={(e) => change.mutate({ id: u.id, role: e.target.value as User['role'] })}>
                      {ROLES.map((r) => (
                        <option key={r}>{r}</option>
                      ))}
                    </select>
                  </td>
                  <td>{u.totp_enabled ? 'on' : 'off'}</td>
                  <td>{day.format(new Date(u.created_at))}</td>
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
            </tbody>
          </table>
        )}
        <form className="inline-form" onSubmit={submit} aria-label="New account">
          <label className="field inline">
            <span>Email</span>
            <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
          </label>
          <label className="field inline">
            <span>Password (at least 10 characters)</span>
            <input type="password" minLength={10} value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="new-password" required />
          </label>
          <label className="field inline">
            <span>Role</span>
            <select value={role} onChange={(e) => setRole(e.target.value as User['role'])}>
              {ROLES.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
          </label>
          <button type="submit" className="button primary" disabled={create.isPending}>
            Create account
          </button>
        </form>
      </section>
    </section>
  );
}
