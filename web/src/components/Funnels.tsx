// Funnels of a site: creating one from 2–8 ordered steps, deleting, and the chart of how many
// visitors reached each step.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Plus, Trash2 } from 'lucide-react';
import { type FormEvent, useState } from 'react';
import { api, type Funnel, type FunnelStep, type FunnelStepStats, type Page, problem } from '../api.ts';
import { formatNumber, formatPercent } from '../dashboard/format.ts';
import type { DateRange } from '../dashboard/range.ts';

const stepText = (s: FunnelStep) => s.label ?? (s.type === 'path' ? `Visit ${s.path_pattern}` : `Event ${s.event_name}`);

function NewFunnel({ siteId, onCreated }: { siteId: string; onCreated(f: Funnel): void }) {
  const [name, setName] = useState('');
  const [steps, setSteps] = useState<{ type: 'event' | 'path'; value: string }[]>([
    { type: 'path', value: '' },
    { type: 'path', value: '' },
  ]);
  const [hours, setHours] = useState(24);
  const create = useMutation({
    mutationFn: () =>
      api<{ funnel: Funnel }>(`/api/sites/${siteId}/funnels`, {
        method: 'POST',
        body: {
          name: name.trim(),
          window_seconds: Math.round(hours * 3600),
          steps: steps.map((s) => (s.type === 'path' ? { type: 'path', path_pattern: s.value.trim() } : { type: 'event', event_name: s.value.trim() })),
        },
      }),
    onSuccess: (r) => {
      setName('');
      setSteps([
        { type: 'path', value: '' },
        { type: 'path', value: '' },
      ]);
      onCreated(r.funnel);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  const change = (i: number, patch: Partial<(typeof steps)[number]>) => setSteps(steps.map((s, j) => (j === i ? { ...s, ...patch } : s)));
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="new-funnel">
      <h2 id="new-funnel">New funnel</h2>
      <label className="field">
        <span>Funnel name</span>
        <input name="funnel-name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={120} />
      </label>
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
            <label className="field inline">
              <span className="visually-hidden">Step {i + 1} {s.type === 'path' ? 'path' : 'event name'}</span>
              <input name={`step-${i + 1}-value`} value={s.value} onChange={(e) => change(i, { value: e.target.value })} placeholder={s.type === 'path' ? (['/', '/pricing'][i] ?? '/checkout') : 'Signup'} required />
            </label>
            {steps.length > 2 && (
              <button type="button" className="icon-button" aria-label={`Remove step ${i + 1}`} onClick={() => setSteps(steps.filter((_, j) => j !== i))}>
                <Trash2 aria-hidden size={16} />
              </button>
            )}
          </li>
        ))}
      </ol>
      <div className="inline-form">
        <button type="button" className="button" disabled={steps.length >= 8} onClick={() => setSteps([...steps, { type: 'path', value: '' }])}>
          <Plus aria-hidden size={16} /> Add step
        </button>
        <label className="field inline">
          <span>Within (hours)</span>
          <input type="number" min={1} max={720} value={hours} onChange={(e) => setHours(Number(e.target.value))} required />
        </label>
      </div>
      {create.isError && (
        <p className="error" role="alert">
          {problem(create.error)}
        </p>
      )}
      <button type="submit" className="button primary" disabled={create.isPending}>
        Create funnel
      </button>
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
              <strong>{formatNumber(s.visitors)}</strong> visitors · {formatPercent(s.conversion_rate)}
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
  const stats = useQuery({
    queryKey: ['funnel-stats', siteId, funnel.id, range],
    queryFn: () => api<{ steps: FunnelStepStats[] }>(`/api/sites/${siteId}/funnels/${funnel.id}/stats`, { query: { ...range } }),
    enabled: range !== undefined,
  });
  const remove = useMutation({
    mutationFn: () => api(`/api/sites/${siteId}/funnels/${funnel.id}`, { method: 'DELETE' }),
    onSuccess: () => void queries.invalidateQueries({ queryKey: ['funnels', siteId] }),
  });
  return (
    <li className="card stack" data-funnel={funnel.name}>
      <header className="panel-head">
        <h3>{funnel.name}</h3>
        {canEdit && (
          <button
            type="button"
            className="icon-button"
            aria-label={`Delete funnel ${funnel.name}`}
            onClick={() => {
              if (confirm(`Delete the funnel “${funnel.name}”?`)) remove.mutate();
            }}
          >
            <Trash2 aria-hidden size={16} />
          </button>
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
      {canEdit && <NewFunnel siteId={siteId} onCreated={() => void queries.invalidateQueries({ queryKey: ['funnels', siteId] })} />}
    </div>
  );
}
