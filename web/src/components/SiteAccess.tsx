// Who may use a site beyond its team's roles (people given a site role of their own), and moving
// the site, with its analytics, into another team.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, type Page, problem, type Site, type SiteMember, type Team, type User } from '../api.ts';
import { useSession } from '../session.tsx';
import { ListTable } from './ListTable.tsx';
import { RoleField, RoleSelect } from './RoleSelect.tsx';
import { submitHandler } from '../forms.ts';

type SiteRole = Site['role'];
const ROLES: SiteRole[] = ['owner', 'admin', 'editor', 'viewer'];

export function SiteMembers({ site }: { site: Site }) {
  const queries = useQueryClient();
  const { user } = useSession();
  const members = useQuery({ queryKey: ['site-members', site.id], queryFn: () => api<Page<SiteMember>>(`/api/sites/${site.id}/members`, { query: { limit: 200 } }) });
  // People to choose from: the site's team, and every account when the person administers the instance.
  const team = useQuery({ queryKey: ['members', site.team_id], queryFn: () => api<Page<{ user_id: string; email: string }>>(`/api/user/teams/${site.team_id}/members`, { query: { limit: 200 } }) });
  const everyone = useQuery({
    queryKey: ['admin-users'],
    queryFn: () => api<Page<User>>('/api/admin/users', { query: { limit: 200 } }),
    enabled: user?.role === 'owner' || user?.role === 'admin',
  });
  const candidates = new Map<string, string>();
  for (const m of team.data?.items ?? []) candidates.set(m.user_id, m.email);
  for (const u of everyone.data?.items ?? []) candidates.set(u.id, u.email);
  for (const m of members.data?.items ?? []) candidates.delete(m.user_id);
  const [userId, setUserId] = useState('');
  const [role, setRole] = useState<SiteRole>('viewer');
  const refresh = () => void queries.invalidateQueries({ queryKey: ['site-members', site.id] });
  const put = useMutation({ mutationFn: (m: { userId: string; role: SiteRole }) => api(`/api/sites/${site.id}/members/${m.userId}`, { method: 'PUT', body: { role: m.role } }), onSuccess: refresh });
  const remove = useMutation({ mutationFn: (id: string) => api(`/api/sites/${site.id}/members/${id}`, { method: 'DELETE' }), onSuccess: refresh });
  const chosen = userId || [...candidates.keys()][0] || '';
  const submit = submitHandler(() => {
    if (chosen) put.mutate({ userId: chosen, role });
  });
  const failure = put.error ?? remove.error;
  // Nobody but the person reading: say how someone else gets in, rather than an empty form.
  const alone =
    members.data !== undefined && team.data !== undefined && [...members.data.items, ...team.data.items].every((m) => m.user_id === user?.id);
  return (
    <div className="stack">
      <p className="muted small">Team owners and admins manage every site of the team and team members can view them; here a person gets a role on this site alone.</p>
      {alone && (
        <div className="notice" data-testid="people-alone">
          <p>
            <strong>Only you have access to this site.</strong> To add someone, <Link to={`/teams/${site.team_id}`}>invite them by email</Link> to the site's team: as
            a team member they see every site of the team. Once they have an account, you can also give them a role on this site alone, here.
          </p>
        </div>
      )}
      {members.data && members.data.items.length > 0 && (
        <ListTable columns={['Person', 'Role on this site']} actions>
          {members.data.items.map((m) => (
            <tr key={m.user_id}>
              <th scope="row">{m.email}</th>
              <td>
                <RoleSelect label={`Site role of ${m.email}`} roles={ROLES} value={m.role} onChange={(r) => put.mutate({ userId: m.user_id, role: r })} />
              </td>
              <td>
                <button type="button" className="button small" onClick={() => remove.mutate(m.user_id)}>
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      {failure && <p className="error">{problem(failure)}</p>}
      {candidates.size > 0 && (
        <form className="inline-form" onSubmit={submit} aria-label="Give someone a role on this site">
          <label className="field inline">
            <span>Person</span>
            <select value={chosen} onChange={(e) => setUserId(e.target.value)}>
              {[...candidates].map(([id, email]) => (
                <option key={id} value={id}>
                  {email}
                </option>
              ))}
            </select>
          </label>
          <RoleField roles={ROLES} value={role} onChange={setRole} />
          <button type="submit" className="button" disabled={put.isPending}>
            Give role
          </button>
        </form>
      )}
    </div>
  );
}

export function TransferSite({ site }: { site: Site }) {
  const queries = useQueryClient();
  const navigate = useNavigate();
  const teams = useQuery({ queryKey: ['teams'], queryFn: () => api<Page<Team>>('/api/user/teams') });
  const targets = (teams.data?.items ?? []).filter((t) => t.id !== site.team_id && !t.archived_at && (t.role === 'owner' || t.role === 'admin'));
  const [teamId, setTeamId] = useState('');
  const chosen = teamId || targets[0]?.id || '';
  const transfer = useMutation({
    mutationFn: () => api<{ status: string }>(`/api/sites/${site.id}/transfer-team`, { method: 'POST', body: { team_id: chosen } }),
    onSuccess: () => {
      void queries.invalidateQueries({ queryKey: ['site', site.id] });
      void queries.invalidateQueries({ queryKey: ['sites'] });
      navigate(`/sites/${site.id}`);
    },
  });
  if (targets.length === 0) return <p className="muted">The site can move, with its analytics, to another team you administer; you administer no other team yet.</p>;
  const submit = submitHandler(() => transfer.mutate());
  return (
    <form className="inline-form" onSubmit={submit}>
      <label className="field inline">
        <span>Team</span>
        <select value={chosen} onChange={(e) => setTeamId(e.target.value)}>
          {targets.map((t) => (
            <option key={t.id} value={t.id}>
              {t.name}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" className="button" disabled={transfer.isPending}>
        {transfer.isPending ? 'Moving the analytics…' : 'Move site'}
      </button>
      {transfer.isError && <p className="error">{problem(transfer.error)}</p>}
    </form>
  );
}
