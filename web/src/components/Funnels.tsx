// Funnels of a site: creating one from 2–8 ordered steps, editing one in place, deleting, and the
// chart of how many visitors reached each step.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Pencil, Plus, Trash2 } from 'lucide-react';
import { useEffect, useId, useRef, useState } from 'react';
import { ApiError, api, type Funnel, type FunnelStep, type FunnelStepStats, type Page, problem } from '../api.ts';
import { formatNumber, formatPercent, NOUNS, nounFor } from '../dashboard/format.ts';
import type { DateRange } from '../dashboard/range.ts';
import { DeleteIconButton } from './DeleteIconButton.tsx';
import { Field, sortFieldErrors, useFocusFirstField, useFocusFirstInvalid } from './Field.tsx';
import { saveItem, submitHandler } from '../forms.ts';

const stepText = (s: FunnelStep) => s.label ?? (s.type === 'path' ? `Visit ${s.path_pattern}` : `Event ${s.event_name}`);

type StepDraft = { type: 'event' | 'path'; value: string; label?: string };

const emptySteps = (): StepDraft[] => [
  { type: 'path', value: '' },
  { type: 'path', value: '' },
];
const draftOf = (s: FunnelStep): StepDraft => ({ type: s.type, value: (s.type === 'path' ? s.path_pattern : s.event_name) ?? '', ...(s.label === undefined ? {} : { label: s.label }) });
/** A step as the API takes it, keys in the order the API answers them (so the two compare). */
const stepOf = (s: StepDraft): FunnelStep => ({
  type: s.type,
  ...(s.type === 'path' ? { path_pattern: s.value.trim() } : { event_name: s.value.trim() }),
  ...(s.label === undefined ? {} : { label: s.label }),
});

/** Where the server's field of a funnel shows in the form: the name, a step's value, the steps, the window. */
function funnelField(field: string): string | null {
  if (field === 'name' || field === 'steps' || field === 'window_seconds') return field;
  const step = /^steps\[(\d+)\]/.exec(field);
  return step ? `step-${step[1]}` : null;
}

/**
 * The funnel form: empty, it creates a funnel (POST); given `funnel`, it edits that funnel in place
 * and PATCHes only what changed (the steps go as a whole list; labels set through the API stay
 * with their step). `onDone` runs after a save and on Cancel.
 */
function FunnelForm({ siteId, funnel, onDone }: { siteId: string; funnel?: Funnel; onDone(saved: Funnel | null): void }) {
  const editing = funnel !== undefined;
  const headingId = useId();
  const form = useRef<HTMLFormElement>(null);
  const [name, setName] = useState(funnel?.name ?? '');
  const [steps, setSteps] = useState<StepDraft[]>(funnel ? funnel.steps.map(draftOf) : emptySteps());
  const [hours, setHours] = useState(funnel ? funnel.window_seconds / 3600 : 24);
  // A window under an hour can only come from the API; editing such a funnel must not refuse it.
  const minHours = Math.min(1, (funnel?.window_seconds ?? 3600) / 3600);
  const changes = (f: Funnel): Record<string, unknown> => {
    const body: Record<string, unknown> = {};
    if (name.trim() !== f.name) body.name = name.trim();
    const next = steps.map(stepOf);
    if (JSON.stringify(next) !== JSON.stringify(f.steps)) body.steps = next;
    if (Math.round(hours * 3600) !== f.window_seconds) body.window_seconds = Math.round(hours * 3600);
    return body;
  };
  const save = useMutation({
    mutationFn: () =>
      saveItem(`/api/sites/${siteId}/funnels`, 'funnel', funnel, changes, () => ({ name: name.trim(), window_seconds: Math.round(hours * 3600), steps: steps.map(stepOf) })),
    onSuccess: (saved) => {
      if (!editing) {
        setName('');
        setSteps(emptySteps());
      }
      onDone(saved);
    },
  });
  const { byField, rest } = sortFieldErrors(save.error, funnelField);
  useFocusFirstInvalid(form, save.error);
  useFocusFirstField(form, editing);
  const submit = submitHandler(() => save.mutate());
  const change = (i: number, patch: Partial<StepDraft>) => setSteps(steps.map((s, j) => (j === i ? { ...s, ...patch } : s)));
  return (
    <form
      ref={form}
      className={editing ? 'stack' : 'card stack'}
      onSubmit={submit}
      onKeyDown={editing ? (e) => e.key === 'Escape' && onDone(null) : undefined}
      aria-labelledby={headingId}
    >
      {editing ? <h3 id={headingId}>Edit funnel {funnel.name}</h3> : <h2 id={headingId}>New funnel</h2>}
      <Field label="Funnel name" error={byField.name} inline={false}>
        {(a11y) => <input {...a11y} name="funnel-name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={120} />}
      </Field>
      <ol className="steps-form">
        {steps.map((s, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: steps are positional; their index is their identity
          <li key={i} className="inline-form">
            <label className="field inline">
              <span>Step {i + 1}</span>
              <select name={`step-${i + 1}-type`} value={s.type} onChange={(e) => change(i, { type: e.target.value as 'event' | 'path' })}>
                <option value="path">Page visit</option>
                <option value="event">Custom event</option>
              </select>
            </label>
            <Field label={`Step ${i + 1} ${s.type === 'path' ? 'path' : 'event name'}`} hideLabel error={byField[`step-${i}`]}>
              {(a11y) => (
                <input {...a11y} name={`step-${i + 1}-value`} value={s.value} onChange={(e) => change(i, { value: e.target.value })} placeholder={s.type === 'path' ? (['/', '/pricing'][i] ?? '/checkout') : 'Signup'} required />
              )}
            </Field>
            {steps.length > 2 && (
              <button type="button" className="icon-button" aria-label={`Remove step ${i + 1}`} onClick={() => setSteps(steps.filter((_, j) => j !== i))}>
                <Trash2 aria-hidden size={16} />
              </button>
            )}
          </li>
        ))}
      </ol>
      {byField.steps && <p className="error">Steps: {byField.steps}</p>}
      <div className="inline-form funnel-window">
        <button type="button" className="button" disabled={steps.length >= 8} onClick={() => setSteps([...steps, { type: 'path', value: '' }])}>
          <Plus aria-hidden size={16} /> Add step
        </button>
        <Field label="Within (hours)" error={byField.window_seconds}>
          {(a11y) => <input {...a11y} type="number" min={minHours} max={720} step="any" value={hours} onChange={(e) => setHours(Number(e.target.value))} required />}
        </Field>
      </div>
      {save.isError && (
        <p className="error" role="alert">
          {rest.length > 0 || !(save.error instanceof ApiError) || save.error.fields.length === 0 ? problem(save.error) : 'Not saved: correct the marked fields.'}
        </p>
      )}
      <div className="form-actions">
        <button type="submit" className="button primary" disabled={save.isPending}>
          {editing ? 'Save funnel' : 'Create funnel'}
        </button>
        {editing && (
          <button type="button" className="button" onClick={() => onDone(null)}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

export function FunnelChart({ steps }: { steps: FunnelStepStats[] }) {
  const first = Math.max(1, steps[0]?.visitors ?? 1);
  return (
    <ol className="funnel-chart" data-testid="funnel-chart">
      {steps.map((s) => (
        <li key={s.index}>
          <div className="funnel-label">
            <span>
              {s.index}. {s.label}
            </span>
            <span>
              <strong>{formatNumber(s.visitors)}</strong> {nounFor(s.visitors, NOUNS.visitor)} · {formatPercent(s.conversion_rate)}
              {s.index > 1 && <span className="muted"> · {formatNumber(s.dropoff)} dropped off</span>}
            </span>
          </div>
          <div className="funnel-track" aria-hidden>
            <div className="funnel-bar" style={{ width: `${(s.visitors / first) * 100}%` }} />
          </div>
        </li>
      ))}
    </ol>
  );
}

function FunnelCard({ siteId, funnel, range, canEdit }: { siteId: string; funnel: Funnel; range?: DateRange; canEdit: boolean }) {
  const queries = useQueryClient();
  const [editing, setEditing] = useState(false);
  const editButton = useRef<HTMLButtonElement>(null);
  // After a save or Cancel, focus goes back to this funnel's Edit button (not on the first render).
  const closed = useRef(false);
  useEffect(() => {
    if (!editing && closed.current) {
      closed.current = false;
      editButton.current?.focus();
    }
  }, [editing]);
  const stats = useQuery({
    queryKey: ['funnel-stats', siteId, funnel.id, range],
    queryFn: () => api<{ steps: FunnelStepStats[] }>(`/api/sites/${siteId}/funnels/${funnel.id}/stats`, { query: { ...range } }),
    enabled: range !== undefined,
  });
  const remove = useMutation({
    mutationFn: () => api(`/api/sites/${siteId}/funnels/${funnel.id}`, { method: 'DELETE' }),
    onSuccess: () => void queries.invalidateQueries({ queryKey: ['funnels', siteId] }),
  });
  if (canEdit && editing)
    return (
      <li className="card stack" data-funnel={funnel.name}>
        <FunnelForm
          siteId={siteId}
          funnel={funnel}
          onDone={(saved) => {
            if (saved) {
              // The card shows the saved funnel at once; the list and its figures are read again.
              queries.setQueryData<Page<Funnel>>(['funnels', siteId], (page) => page && { ...page, items: page.items.map((f) => (f.id === saved.id ? saved : f)) });
              void queries.invalidateQueries({ queryKey: ['funnels', siteId] });
              void queries.invalidateQueries({ queryKey: ['funnel-stats', siteId, funnel.id] });
            }
            closed.current = true;
            setEditing(false);
          }}
        />
      </li>
    );
  return (
    <li className="card stack" data-funnel={funnel.name}>
      <header className="panel-head">
        <h3>{funnel.name}</h3>
        {canEdit && (
          <div className="actions">
            <button type="button" className="icon-button" aria-label={`Edit funnel ${funnel.name}`} ref={editButton} onClick={() => setEditing(true)}>
              <Pencil aria-hidden size={16} />
            </button>
            <DeleteIconButton label={`Delete funnel ${funnel.name}`} question={`Delete the funnel “${funnel.name}”?`} onDelete={() => remove.mutate()} />
          </div>
        )}
      </header>
      {stats.data ? (
        <FunnelChart steps={stats.data.steps} />
      ) : (
        <ol className="muted small">
          {funnel.steps.map((s, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: steps are positional
            <li key={i}>{stepText(s)}</li>
          ))}
        </ol>
      )}
    </li>
  );
}

export function FunnelsPanel({ siteId, canEdit, range }: { siteId: string; canEdit: boolean; range?: DateRange }) {
  const queries = useQueryClient();
  const funnels = useQuery({ queryKey: ['funnels', siteId], queryFn: () => api<Page<Funnel>>(`/api/sites/${siteId}/funnels`, { query: { limit: 200 } }) });
  const list = funnels.data?.items ?? [];
  return (
    <div className="stack">
      {funnels.isSuccess && list.length === 0 && <p className="muted">No funnels yet.</p>}
      <ul className="funnel-list">
        {list.map((f) => (
          <FunnelCard key={f.id} siteId={siteId} funnel={f} range={range} canEdit={canEdit} />
        ))}
      </ul>
      {canEdit && <FunnelForm siteId={siteId} onDone={() => void queries.invalidateQueries({ queryKey: ['funnels', siteId] })} />}
    </div>
  );
}
