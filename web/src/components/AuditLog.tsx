// A team's audit log, newest first, a page at a time. Entries read in names (the action in words,
// the site's domain, the goal's name, the person's email); the raw action and ids stay a hover away
// in each cell's title, for whoever needs to match them against the API or the database.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { type AuditEntry, api } from '../api.ts';
import { ListTable } from './ListTable.tsx';

const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const LIMIT = 25;

const ACTIONS: Record<string, string> = {
  'team.created': 'Team created',
  'team.updated': 'Team renamed',
  'team.archived': 'Team archived',
  'member.added': 'Member added',
  'member.role_changed': 'Member’s role changed',
  'member.removed': 'Member removed',
  'invitation.created': 'Invitation sent',
  'invitation.resent': 'Invitation renewed',
  'invitation.revoked': 'Invitation revoked',
  'invitation.declined': 'Invitation declined',
  'sso.updated': 'Single sign-on changed',
  'sso.deleted': 'Single sign-on removed',
  'member.joined_by_sso': 'Joined through single sign-on',
  'invitation.accepted': 'Invitation accepted',
  'site.created': 'Site added',
  'site.updated': 'Site changed',
  'site.deleted': 'Site deleted',
  'site.transferred': 'Site moved',
  'site.member.updated': 'Site role set',
  'site.member.removed': 'Site role withdrawn',
  'site.share.created': 'Share link created',
  'site.share.updated': 'Share link changed',
  'site.share.revoked': 'Share link revoked',
  'site.webhook.created': 'Webhook added',
  'site.webhook.updated': 'Webhook changed',
  'site.webhook.deleted': 'Webhook deleted',
  'site.webhook.secret_rotated': 'Webhook secret rotated',
  'goal.created': 'Goal added',
  'goal.updated': 'Goal changed',
  'goal.deleted': 'Goal deleted',
  'funnel.created': 'Funnel added',
  'funnel.updated': 'Funnel changed',
  'funnel.deleted': 'Funnel deleted',
};

const SUBJECTS: Record<NonNullable<AuditEntry['subject']>['type'], string> = {
  goal: 'Goal',
  funnel: 'Funnel',
  share_link: 'Share link',
  webhook: 'Webhook',
  team: 'Team',
};

/** The ids behind an entry's names, one per line, for the details cell's title. */
function ids(e: AuditEntry): string {
  const lines: string[] = [];
  if (e.site) lines.push(`Site ${e.site.domain}: ${e.site.id}`);
  if (e.subject) lines.push(`${SUBJECTS[e.subject.type] ?? e.subject.type}${e.subject.name ? ` “${e.subject.name}”` : ''}: ${e.subject.id}`);
  if (e.target_user_id) lines.push(`Person ${e.target_email ?? ''}: ${e.target_user_id}`);
  return lines.join('\n');
}

export function AuditLog({ teamId }: { teamId: string }) {
  const [offset, setOffset] = useState(0);
  const audit = useQuery({
    queryKey: ['audit', teamId, offset],
    queryFn: () => api<{ entries: AuditEntry[]; total: number; has_more: boolean }>(`/api/user/teams/${teamId}/audit`, { query: { limit: LIMIT, offset } }),
  });
  if (audit.isError) return <p className="error">{audit.error.message}</p>;
  if (!audit.data) return <p className="muted">Loading…</p>;
  return (
    <div className="stack">
      <ListTable columns={['When', 'Action', 'By', 'Details']} testId="audit" label="Audit log entries">
        {audit.data.entries.map((e) => (
          <tr key={e.id}>
            <td className="nowrap">{when.format(new Date(e.created_at))}</td>
            <td className="nowrap" title={e.action} data-action={e.action}>
              {ACTIONS[e.action] ?? e.action}
            </td>
            <td title={e.actor_user_id ? `Person ${e.actor_email ?? ''}: ${e.actor_user_id}` : undefined}>{e.actor_email ?? '–'}</td>
            <td title={ids(e) || undefined}>
              {e.target_email && (
                <>
                  <strong>{e.target_email}</strong>
                  {e.details ? ': ' : ''}
                </>
              )}
              {e.details}
            </td>
          </tr>
        ))}
      </ListTable>
      <div className="inline-form">
        <button type="button" className="button small" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - LIMIT))}>
          Newer
        </button>
        <span className="muted small">
          {audit.data.total === 0 ? 'No entries' : `${offset + 1}–${offset + audit.data.entries.length} of ${audit.data.total}`}
        </span>
        <button type="button" className="button small" disabled={!audit.data.has_more} onClick={() => setOffset(offset + LIMIT)}>
          Older
        </button>
      </div>
    </div>
  );
}
