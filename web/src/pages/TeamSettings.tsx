// A team: its members (invite by email: the person joins by accepting; change role; remove),
// open invitations, single sign-on, and the audit log.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { NavLink, useNavigate, useParams } from 'react-router';
import { api, type OpenInvitation, type Page, problem, type Team, type TeamMember } from '../api.ts';
import { Loading } from '../App.tsx';
import { AuditLog } from '../components/AuditLog.tsx';
import { CopyButton } from '../components/CopyButton.tsx';
import { ListTable } from '../components/ListTable.tsx';
import { RoleField, RoleSelect } from '../components/RoleSelect.tsx';
import { TeamSso } from '../components/TeamSso.tsx';
import { useSession } from '../session.tsx';
import { useTitle } from '../title.ts';
import { submitHandler } from '../forms.ts';

type Role = Team['role'];

const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const ROLES: Role[] = ['owner', 'admin', 'member'];

function Members({ team }: { team: Team }) {
  const queries = useQueryClient();
  const { user } = useSession();
  const admin = team.role === 'owner' || team.role === 'admin';
  const members = useQuery({ queryKey: ['members', team.id], queryFn: () => api<Page<TeamMember>>(`/api/user/teams/${team.id}/members`, { query: { limit: 200 } }) });
  const invitations = useQuery({
    queryKey: ['invitations', team.id],
    queryFn: () => api<Page<OpenInvitation>>(`/api/user/teams/${team.id}/invitations`, { query: { limit: 200 } }),
    enabled: admin,
  });
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [inviteUrl, setInviteUrl] = useState<string | null>(null);
  const refresh = () => {
    void queries.invalidateQueries({ queryKey: ['members', team.id] });
    void queries.invalidateQueries({ queryKey: ['invitations', team.id] });
    void queries.invalidateQueries({ queryKey: ['audit', team.id] });
  };
  const add = useMutation({
    mutationFn: () => api<{ invite_token: string }>(`/api/user/teams/${team.id}/members`, { method: 'POST', body: { email: email.trim(), role } }),
    onSuccess: (r) => {
      setInviteUrl(`${window.location.origin}/invite/${r.invite_token}`);
      setEmail('');
      refresh();
    },
  });
  const change = useMutation({
    mutationFn: (m: { userId: string; role: Role }) => api(`/api/user/teams/${team.id}/members/${m.userId}`, { method: 'PATCH', body: { role: m.role } }),
    onSuccess: refresh,
  });
  const remove = useMutation({ mutationFn: (userId: string) => api(`/api/user/teams/${team.id}/members/${userId}`, { method: 'DELETE' }), onSuccess: refresh });
  const revoke = useMutation({ mutationFn: (id: string) => api(`/api/user/teams/${team.id}/invitations/${id}`, { method: 'DELETE' }), onSuccess: refresh });
  const resend = useMutation({
    mutationFn: (id: string) => api<{ invite_token: string }>(`/api/user/teams/${team.id}/invitations/${id}/resend`, { method: 'POST', body: {} }),
    onSuccess: (r) => {
      setInviteUrl(`${window.location.origin}/invite/${r.invite_token}`);
      refresh();
    },
  });
  const submit = submitHandler(() => add.mutate());
  const failure = add.error ?? change.error ?? remove.error ?? revoke.error ?? resend.error;
  return (
    <div className="stack">
      {members.data && (
        <ListTable columns={['Member', 'Role', 'Joined']} actions={admin}>
          {members.data.items.map((m) => (
            <tr key={m.user_id}>
              <th scope="row">{m.email}</th>
              <td>
                {admin ? (
                  <RoleSelect label={`Role of ${m.email}`} roles={ROLES} value={m.role} onChange={(r) => change.mutate({ userId: m.user_id, role: r })} />
                ) : (
                  m.role
                )}
              </td>
              <td className="nowrap">{when.format(new Date(m.joined_at))}</td>
              {admin && (
                <td>
                  {m.user_id !== user?.id && (
                    <button type="button" className="button small" onClick={() => remove.mutate(m.user_id)}>
                      Remove
                    </button>
                  )}
                </td>
              )}
            </tr>
          ))}
        </ListTable>
      )}
      {failure && <p className="error">{problem(failure)}</p>}
      {admin && (
        <form className="inline-form" onSubmit={submit} aria-label="Add a member">
          <label className="field inline">
            <span>Email</span>
            <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
          </label>
          <RoleField roles={ROLES} value={role} onChange={setRole} />
          <button type="submit" className="button primary" disabled={add.isPending}>
            Invite
          </button>
        </form>
      )}
      {inviteUrl && (
        <div className="notice" role="status">
          <p>Invitation created. If they already have an account, they can accept it from their Sites page once signed in; otherwise send them this link (valid 7 days):</p>
          <div className="copy-row">
            <input className="code-input" readOnly value={inviteUrl} aria-label="Invitation link" onFocus={(e) => e.target.select()} />
            <CopyButton text={inviteUrl} label="Copy link" />
          </div>
        </div>
      )}
      {invitations.data && invitations.data.items.length > 0 && (
        <>
          <h3>Open invitations</h3>
          <ul className="plain-list">
            {invitations.data.items.map((i) => (
              <li key={i.id}>
                {i.email} ({i.role}, {i.status === 'expired' ? 'expired' : `until ${when.format(new Date(i.expires_at))}`}){' '}
                <button type="button" className="button small" onClick={() => resend.mutate(i.id)}>
                  New link
                </button>{' '}
                <button type="button" className="button small" onClick={() => revoke.mutate(i.id)}>
                  Revoke
                </button>
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}

function TeamActions({ team }: { team: Team }) {
  const queries = useQueryClient();
  const navigate = useNavigate();
  const [name, setName] = useState(team.name);
  const [newName, setNewName] = useState('');
  const refresh = () => {
    void queries.invalidateQueries({ queryKey: ['teams'] });
    void queries.invalidateQueries({ queryKey: ['audit', team.id] });
  };
  const rename = useMutation({ mutationFn: () => api(`/api/user/teams/${team.id}`, { method: 'PATCH', body: { name: name.trim() } }), onSuccess: refresh });
  const archive = useMutation({
    mutationFn: () => api(`/api/user/teams/${team.id}/archive`, { method: 'POST', body: {} }),
    onSuccess: () => {
      refresh();
      navigate('/');
    },
  });
  const create = useMutation({
    mutationFn: () => api<Team>('/api/user/teams', { method: 'POST', body: { name: newName.trim() } }),
    onSuccess: (created) => {
      setNewName('');
      refresh();
      navigate(`/teams/${created.id}`);
    },
  });
  const failure = rename.error ?? archive.error ?? create.error;
  return (
    <div className="stack">
      <form className="inline-form" onSubmit={submitHandler(() => rename.mutate())}>
        <label className="field inline">
          <span>Team name</span>
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={120} />
        </label>
        <button type="submit" className="button" disabled={rename.isPending}>
          Rename
        </button>
        {team.role === 'owner' && (
          <button
            type="button"
            className="button danger"
            onClick={() => {
              if (confirm(`Archive ${team.name}?`)) archive.mutate();
            }}
          >
            Archive team
          </button>
        )}
      </form>
      <form className="inline-form" onSubmit={submitHandler(() => create.mutate())}>
        <label className="field inline">
          <span>New team</span>
          <input value={newName} onChange={(e) => setNewName(e.target.value)} required maxLength={120} placeholder="Marketing" />
        </label>
        <button type="submit" className="button" disabled={create.isPending}>
          Create team
        </button>
      </form>
      {failure && <p className="error">{problem(failure)}</p>}
    </div>
  );
}

export default function TeamSettings() {
  const { teamId = '' } = useParams();
  const teams = useQuery({ queryKey: ['teams'], queryFn: () => api<Page<Team>>('/api/user/teams') });
  const team = teams.data?.items.find((t) => t.id === teamId);
  useTitle(team?.name, 'Team');
  if (teams.isPending) return <Loading />;
  if (!team) {
    return (
      <section className="page">
        <h1>Team not found</h1>
      </section>
    );
  }
  const admin = team.role === 'owner' || team.role === 'admin';
  return (
    <section className="page">
      <header className="page-head">
        <h1>{team.name}</h1>
        {teams.data && teams.data.items.length > 1 && (
          <nav aria-label="Teams" className="subnav">
            {teams.data.items
              .filter((t) => !t.archived_at)
              .map((t) => (
                <NavLink key={t.id} to={`/teams/${t.id}`}>
                  {t.name}
                </NavLink>
              ))}
          </nav>
        )}
      </header>
      <div className="stack">
        <section className="card stack" aria-labelledby="members">
          <h2 id="members">Members</h2>
          <Members team={team} />
        </section>
        {admin && (
          <section className="card stack" aria-labelledby="team-settings">
            <h2 id="team-settings">Team</h2>
            <TeamActions team={team} />
          </section>
        )}
        {admin && (
          <section className="card stack" aria-labelledby="single-sign-on">
            <h2 id="single-sign-on">Single sign-on</h2>
            <TeamSso teamId={team.id} />
          </section>
        )}
        {admin && (
          <section className="card stack" aria-labelledby="audit-log">
            <h2 id="audit-log">Audit log</h2>
            <AuditLog teamId={team.id} />
          </section>
        )}
      </div>
    </section>
  );
}
