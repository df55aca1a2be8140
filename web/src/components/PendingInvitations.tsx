// Invitations addressed to the signed-in person, on their Sites page: accept to join the team (its
// sites appear at once), or decline. Nothing shows when there are none.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, problem } from '../api.ts';

interface ReceivedInvitation {
  id: string;
  team_id: string;
  team_name: string;
  role: 'owner' | 'admin' | 'member';
  invited_by: string | null;
  expires_at: string;
}

const day = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export function PendingInvitations() {
  const queries = useQueryClient();
  const received = useQuery({ queryKey: ['received-invitations'], queryFn: () => api<{ invitations: ReceivedInvitation[] }>('/api/user/invitations') });
  const refresh = () => {
    void queries.invalidateQueries({ queryKey: ['received-invitations'] });
    void queries.invalidateQueries({ queryKey: ['teams'] });
    void queries.invalidateQueries({ queryKey: ['sites'] });
  };
  const answer = useMutation({
    mutationFn: (m: { id: string; accept: boolean }) => api(`/api/user/invitations/${m.id}/${m.accept ? 'accept' : 'decline'}`, { method: 'POST', body: {} }),
    onSuccess: refresh,
  });
  const invitations = received.data?.invitations ?? [];
  if (invitations.length === 0) return null;
  return (
    <section className="notice" aria-label="Invitations" data-testid="pending-invitations">
      {invitations.map((i) => (
        <div key={i.id} className="invitation-row">
          <p>
            {i.invited_by ? `${i.invited_by} invites you` : 'You are invited'} to join the team <strong>{i.team_name}</strong> as {i.role === 'admin' ? 'an' : 'a'} {i.role}.{' '}
            <span className="muted">Open until {day.format(new Date(i.expires_at))}.</span>
          </p>
          <div className="invitation-actions">
            <button type="button" className="button primary" disabled={answer.isPending} onClick={() => answer.mutate({ id: i.id, accept: true })}>
              Accept
            </button>
            <button type="button" className="button" disabled={answer.isPending} onClick={() => answer.mutate({ id: i.id, accept: false })}>
              Decline
            </button>
          </div>
        </div>
      ))}
      {answer.error && (
        <p className="error" role="alert">
          {problem(answer.error)}
        </p>
      )}
    </section>
  );
}
