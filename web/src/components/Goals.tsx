// Goals of a site: the list with conversions in the chosen range, and (for editors) creating and
// deleting goals. Used on the Goals page and in the site settings.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Trash2 } from 'lucide-react';
import { type FormEvent, useState } from 'react';
import { api, type Goal, type GoalStatsRow, type Page, problem } from '../api.ts';
import { formatNumber, formatPercent } from '../dashboard/format.ts';
import type { DateRange } from '../dashboard/range.ts';

export function describeGoal(g: Goal): string {
  if (g.type === 'path') return `Visits ${g.path_pattern}`;
  const conditions = (g.property_conditions ?? []).map((c) => `${c.key} = ${c.value}`).join(', ');
  const revenue = g.revenue ? ` (revenue in ${g.revenue.currency})` : '';
  return `Event ${g.event_name}${conditions ? ` where ${conditions}` : ''}${revenue}`;
}

function NewGoal({ siteId }: { siteId: string }) {
  const queries = useQueryClient();
  const [name, setName] = useState('');
  const [type, setType] = useState<'event' | 'path'>('event');
  const [target, setTarget] = useState('');
  const [propertyKey, setPropertyKey] = useState('');
  const [propertyValue, setPropertyValue] = useState('');
  const [currency, setCurrency] = useState('');
  const eventGoal = () => ({
    event_name: target.trim(),
    ...(propertyKey.trim() ? { property_conditions: [{ key: propertyKey.trim(), value: propertyValue }] } : {}),
    ...(currency.trim() ? { revenue: { currency: currency.trim().toUpperCase() } } : {}),
  });
  const create = useMutation({
    mutationFn: () =>
      api<{ goal: Goal }>(`/api/sites/${siteId}/goals`, {
        method: 'POST',
        body: type === 'event' ? { name: name.trim(), type, ...eventGoal() } : { name: name.trim(), type, path_pattern: target.trim() },
      }),
    onSuccess: () => {
      setName('');
      setTarget('');
      setPropertyKey('');
      setPropertyValue('');
      setCurrency('');
      void queries.invalidateQueries({ queryKey: ['goals', siteId] });
      void queries.invalidateQueries({ queryKey: ['goal-stats', siteId] });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <form className="inline-form" onSubmit={submit} aria-label="New goal">
      <label className="field inline">
        <span>Goal name</span>
        <input name="goal-name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={120} />
      </label>
      <label className="field inline">
        <span>Type</span>
        <select name="goal-type" value={type} onChange={(e) => setType(e.target.value as 'event' | 'path')}>
          <option value="event">Custom event</option>
          <option value="path">Page visit</option>
        </select>
      </label>
      <label className="field inline">
        <span>{type === 'event' ? 'Event name' : 'Path (use * as a wildcard)'}</span>
        <input name="goal-target" value={target} onChange={(e) => setTarget(e.target.value)} placeholder={type === 'event' ? 'Signup' : '/thank-you'} required />
      </label>
      {type === 'event' && (
        <>
          <label className="field inline">
            <span>Only when property (optional)</span>
            <input name="goal-property-key" value={propertyKey} onChange={(e) => setPropertyKey(e.target.value)} placeholder="plan" maxLength={64} />
          </label>
          <label className="field inline">
            <span>equals</span>
            <input name="goal-property-value" value={propertyValue} onChange={(e) => setPropertyValue(e.target.value)} placeholder="pro" maxLength={256} disabled={!propertyKey.trim()} />
          </label>
          <label className="field inline">
            <span>Revenue currency (optional)</span>
            <input name="goal-currency" value={currency} onChange={(e) => setCurrency(e.target.value)} placeholder="EUR" pattern="[A-Za-z]{3}" maxLength={3} />
          </label>
        </>
      )}
      <button type="submit" className="button primary" disabled={create.isPending}>
        Add goal
      </button>
      {create.isError && (
        <p className="error" role="alert">
          {problem(create.error)}
        </p>
      )}
    </form>
  );
}

export function GoalsPanel({ siteId, canEdit, range }: { siteId: string; canEdit: boolean; range?: DateRange }) {
  const queries = useQueryClient();
  const goals = useQuery({ queryKey: ['goals', siteId], queryFn: () => api<Page<Goal>>(`/api/sites/${siteId}/goals`, { query: { limit: 200 } }) });
  const stats = useQuery({
    queryKey: ['goal-stats', siteId, range],
    queryFn: () => api<{ rows: GoalStatsRow[] }>(`/api/sites/${siteId}/goals/stats`, { query: range ? { ...range } : {} }),
    enabled: range !== undefined,
  });
  const remove = useMutation({
    mutationFn: (id: string) => api(`/api/sites/${siteId}/goals/${id}`, { method: 'DELETE' }),
    onSuccess: () => {
      void queries.invalidateQueries({ queryKey: ['goals', siteId] });
      void queries.invalidateQueries({ queryKey: ['goal-stats', siteId] });
    },
  });
  const byId = new Map((stats.data?.rows ?? []).map((r) => [r.goal_id, r]));
  const list = goals.data?.items ?? [];
  return (
    <div className="stack">
      {canEdit && <NewGoal siteId={siteId} />}
      {goals.isSuccess && list.length === 0 && <p className="muted">No goals yet.</p>}
      {list.length > 0 && (
        <table className="table" data-testid="goals">
          <thead>
            <tr>
              <th scope="col">Goal</th>
              <th scope="col">Matches</th>
              {range && <th scope="col">Conversions</th>}
              {range && <th scope="col">Rate</th>}
              {canEdit && (
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {list.map((g) => {
              const row = byId.get(g.id);
              return (
                <tr key={g.id}>
                  <th scope="row">{g.name}</th>
                  <td>{describeGoal(g)}</td>
                  {range && <td>{row ? formatNumber(row.conversions) : '–'}</td>}
                  {range && <td>{row ? formatPercent(row.conversion_rate) : '–'}</td>}
                  {canEdit && (
                    <td>
                      <button
                        type="button"
                        className="icon-button"
                        aria-label={`Delete goal ${g.name}`}
                        onClick={() => {
                          if (confirm(`Delete the goal “${g.name}”? Past conversions stay in the data.`)) remove.mutate(g.id);
                        }}
                      >
                        <Trash2 aria-hidden size={16} />
                      </button>
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {remove.isError && <p className="error">{problem(remove.error)}</p>}
    </div>
  );
}
