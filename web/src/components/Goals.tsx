// Goals of a site: the list with conversions in the chosen range, and (for editors) creating,
// editing in place and deleting goals: the Goals page, the one place goals are edited.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Pencil } from 'lucide-react';
import { useRef, useState } from 'react';
import { ApiError, api, type Goal, type GoalStatsRow, type Page, problem } from '../api.ts';
import { formatNumber, formatPercent } from '../dashboard/format.ts';
import type { DateRange } from '../dashboard/range.ts';
import { DeleteIconButton } from './DeleteIconButton.tsx';
import { Field, sortFieldErrors, useFocusFirstField, useFocusFirstInvalid } from './Field.tsx';
import { ListTable } from './ListTable.tsx';
import { saveItem, submitHandler } from '../forms.ts';

export function describeGoal(g: Goal): string {
  if (g.type === 'path') return `Visits ${g.path_pattern}`;
  const conditions = (g.property_conditions ?? []).map((c) => `${c.key} = ${c.value}`).join(', ');
  const revenue = g.revenue ? ` (revenue in ${g.revenue.currency})` : '';
  return `Event ${g.event_name}${conditions ? ` where ${conditions}` : ''}${revenue}`;
}

type GoalField = 'name' | 'type' | 'target' | 'property' | 'currency';

/** Where the server's field of a goal shows in the form (null: on the form as a whole). */
function goalField(field: string): GoalField | null {
  if (field === 'name' || field === 'type') return field;
  if (field === 'event_name' || field === 'path_pattern') return 'target';
  if (field.startsWith('property_conditions')) return 'property';
  if (field.startsWith('revenue')) return 'currency';
  return null;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The goal form: empty, it creates a goal (POST); given `goal`, it edits that goal in place and
 * PATCHes only the fields that changed (property conditions after the first, which only the API
 * can set, are kept as they are). `onDone` runs after a save and on Cancel.
 */
export function GoalForm({ siteId, goal, onDone }: { siteId: string; goal?: Goal; onDone?(saved: Goal | null): void }) {
  const queries = useQueryClient();
  const editing = goal !== undefined;
  const first = goal?.property_conditions?.[0];
  const extraConditions = goal?.property_conditions?.slice(1) ?? [];
  const [name, setName] = useState(goal?.name ?? '');
  const [type, setType] = useState<'event' | 'path'>(goal?.type ?? 'event');
  const [target, setTarget] = useState((goal?.type === 'path' ? goal.path_pattern : goal?.event_name) ?? '');
  const [propertyKey, setPropertyKey] = useState(first?.key ?? '');
  const [propertyValue, setPropertyValue] = useState(first?.value ?? '');
  const [currency, setCurrency] = useState(goal?.revenue?.currency ?? '');
  const form = useRef<HTMLFormElement>(null);
  const conditions = () => [...(propertyKey.trim() ? [{ key: propertyKey.trim(), value: propertyValue }] : []), ...extraConditions];
  const eventGoal = () => ({
    event_name: target.trim(),
    ...(conditions().length > 0 ? { property_conditions: conditions() } : {}),
    ...(currency.trim() ? { revenue: { currency: currency.trim().toUpperCase() } } : {}),
  });
  /** The PATCH body: what differs from the goal as stored; a new type carries its whole matcher. */
  const changes = (g: Goal): Record<string, unknown> => {
    const body: Record<string, unknown> = {};
    if (name.trim() !== g.name) body.name = name.trim();
    if (type !== g.type) return { ...body, type, ...(type === 'event' ? eventGoal() : { path_pattern: target.trim() }) };
    if (type === 'path') return target.trim() !== g.path_pattern ? { ...body, path_pattern: target.trim() } : body;
    if (target.trim() !== g.event_name) body.event_name = target.trim();
    if (!sameJson(conditions(), g.property_conditions ?? [])) body.property_conditions = conditions().length > 0 ? conditions() : null;
    const cur = currency.trim().toUpperCase();
    if (cur !== (g.revenue?.currency ?? '')) body.revenue = cur ? { currency: cur } : null;
    return body;
  };
  const save = useMutation({
    mutationFn: () =>
      saveItem(`/api/sites/${siteId}/goals`, 'goal', goal, changes, () =>
        type === 'event' ? { name: name.trim(), type, ...eventGoal() } : { name: name.trim(), type, path_pattern: target.trim() },
      ),
    onSuccess: (saved) => {
      if (saved) {
        // The row shows the saved goal at once; the list and the figures are read again.
        queries.setQueryData<Page<Goal>>(['goals', siteId], (page) => page && { ...page, items: page.items.map((g) => (g.id === saved.id ? saved : g)) });
        void queries.invalidateQueries({ queryKey: ['goals', siteId] });
        void queries.invalidateQueries({ queryKey: ['goal-stats', siteId] });
      }
      if (editing) {
        onDone?.(saved);
        return;
      }
      setName('');
      setTarget('');
      setPropertyKey('');
      setPropertyValue('');
      setCurrency('');
    },
  });
  const { byField, rest } = sortFieldErrors(save.error, goalField);
  useFocusFirstInvalid(form, save.error);
  useFocusFirstField(form, editing);
  const submit = submitHandler(() => save.mutate());
  const cancel = () => onDone?.(null);
  return (
    <form
      ref={form}
      className="stack"
      onSubmit={submit}
      onKeyDown={editing ? (e) => e.key === 'Escape' && cancel() : undefined}
      aria-label={goal ? `Edit goal ${goal.name}` : 'New goal'}
    >
      <div className="form-row">
        <Field label="Goal name" error={byField.name}>
          {(a11y) => <input {...a11y} name="goal-name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={120} />}
        </Field>
        <Field label="Type" error={byField.type}>
          {(a11y) => (
            <select {...a11y} name="goal-type" value={type} onChange={(e) => setType(e.target.value as 'event' | 'path')}>
              <option value="event">Custom event</option>
              <option value="path">Page visit</option>
            </select>
          )}
        </Field>
        <Field label={type === 'event' ? 'Event name' : 'Path (use * as a wildcard)'} error={byField.target}>
          {(a11y) => <input {...a11y} name="goal-target" value={target} onChange={(e) => setTarget(e.target.value)} placeholder={type === 'event' ? 'Signup' : '/thank-you'} required />}
        </Field>
      </div>
      {type === 'event' && (
        <div className="form-row">
          <Field label="Only when property (optional)" error={byField.property}>
            {(a11y) => <input {...a11y} name="goal-property-key" value={propertyKey} onChange={(e) => setPropertyKey(e.target.value)} placeholder="plan" maxLength={64} />}
          </Field>
          <Field label="equals">
            {(a11y) => <input {...a11y} name="goal-property-value" value={propertyValue} onChange={(e) => setPropertyValue(e.target.value)} placeholder="pro" maxLength={256} disabled={!propertyKey.trim()} />}
          </Field>
          <Field label="Revenue currency (optional)" error={byField.currency}>
            {(a11y) => <input {...a11y} name="goal-currency" value={currency} onChange={(e) => setCurrency(e.target.value)} placeholder="EUR" pattern="[A-Za-z]{3}" maxLength={3} />}
          </Field>
        </div>
      )}
      {type === 'event' && extraConditions.length > 0 && (
        <p className="muted small">Also only when {extraConditions.map((c) => `${c.key} = ${c.value}`).join(', ')} (kept; set through the API).</p>
      )}
      <div className="form-actions">
        <button type="submit" className="button primary" disabled={save.isPending}>
          {editing ? 'Save goal' : 'Add goal'}
        </button>
        {editing && (
          <button type="button" className="button" onClick={cancel}>
            Cancel
          </button>
        )}
      </div>
      {save.isError && (
        <p className="error" role="alert">
          {rest.length > 0 || !(save.error instanceof ApiError) || save.error.fields.length === 0 ? problem(save.error) : 'Not saved: correct the marked fields.'}
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
  // The goal being edited in place, and the goal whose Edit button takes the focus back.
  const [editing, setEditing] = useState<string | null>(null);
  const refocus = useRef<string | null>(null);
  const byId = new Map((stats.data?.rows ?? []).map((r) => [r.goal_id, r]));
  const list = goals.data?.items ?? [];
  return (
    <div className="stack">
      {canEdit && <GoalForm siteId={siteId} />}
      {goals.isSuccess && list.length === 0 && <p className="muted">No goals yet.</p>}
      {list.length > 0 && (
        <ListTable columns={['Goal', 'Matches', range && 'Conversions', range && 'Rate']} numeric={['Conversions', 'Rate']} actions={canEdit} testId="goals">
          {list.map((g) => {
            const row = byId.get(g.id);
            if (canEdit && editing === g.id)
              return (
                <tr key={g.id} className="edit-row">
                  <td colSpan={range ? 5 : 3}>
                    <GoalForm
                      siteId={siteId}
                      goal={g}
                      onDone={() => {
                        refocus.current = g.id;
                        setEditing(null);
                      }}
                    />
                  </td>
                </tr>
              );
            return (
              <tr key={g.id}>
                <th scope="row">{g.name}</th>
                <td>{describeGoal(g)}</td>
                {range && <td className="num">{row ? formatNumber(row.conversions) : '–'}</td>}
                {range && <td className="num">{row ? formatPercent(row.conversion_rate) : '–'}</td>}
                {canEdit && (
                  <td className="actions">
                    <button
                      type="button"
                      className="icon-button"
                      aria-label={`Edit goal ${g.name}`}
                      ref={(button) => {
                        if (button && refocus.current === g.id) {
                          refocus.current = null;
                          button.focus();
                        }
                      }}
                      onClick={() => setEditing(g.id)}
                    >
                      <Pencil aria-hidden size={16} />
                    </button>
                    <DeleteIconButton label={`Delete goal ${g.name}`} question={`Delete the goal “${g.name}”? Past conversions stay in the data.`} onDelete={() => remove.mutate(g.id)} />
                  </td>
                )}
              </tr>
            );
          })}
        </ListTable>
      )}
      {remove.isError && <p className="error">{problem(remove.error)}</p>}
    </div>
  );
}
