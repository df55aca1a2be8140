// A site-settings section a plugin describes (GET /api/dashboard/plugins): a form generated from its
// JSON schema, read from and saved to the plugin's route, and its action buttons. The server's
// field errors show under their fields; an action's answer (`message`) shows beside the buttons.
// Read-only fields are what the plugin reports beside them: shown as they are read, never sent
// (a hidden one only read). A button with a condition is drawn while the answer meets it; a field
// with `choicesFrom` is a choice among the values of a list in the answer.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState } from 'react';
import { api } from '../api.ts';
import { ActionOutcome, usePluginActions } from '../dashboard/plugin-actions.tsx';
import type { FormField, SiteSettingsSection } from '../dashboard/plugin-dashboard.ts';
import { shownValue } from '../dashboard/plugin-values.ts';
import { submitHandler } from '../forms.ts';
import { Field, sortFieldErrors, useFocusFirstInvalid } from './Field.tsx';

type Values = Record<string, string | boolean>;

/** Form text for a value: numbers and strings as typed, null as empty. */
const asText = (value: unknown) => (value === null || value === undefined ? '' : String(value));

/** The fields a person sets, in the schema's order. */
const editable = (schema: SiteSettingsSection['schema']) => Object.entries(schema.properties).filter(([, field]) => !field.readOnly);

/** The values as the route takes them: integers as numbers, empty nullable fields as null; read-only fields are not the route's to take. */
function toBody(schema: SiteSettingsSection['schema'], values: Values): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [key, field] of editable(schema)) {
    const value = values[key];
    if (field.type === 'boolean') body[key] = value === true;
    else if (value === '' || value === undefined) body[key] = field.nullable ? null : '';
    else body[key] = field.type === 'integer' && /^-?\d+$/.test(String(value)) ? Number(value) : value;
  }
  return body;
}

/** The button's condition met by the section's answer: it is drawn then only. */
const shownBy =
  (data: Record<string, unknown>) =>
  ({ shown_when: condition }: SiteSettingsSection['actions'][number]) =>
    !condition || condition.in.some((value) => value === (data[condition.field] ?? null));

/**
 * The choices of a field that takes them from a list: the list's strings, and the value the form
 * holds when the list lacks it (the saved one, which the account may no longer list), so a select
 * never silently shows another value than it holds.
 */
function choicesOf(field: FormField, data: Record<string, unknown>, held: string): string[] {
  const listed = field.choicesFrom ? data[field.choicesFrom] : undefined;
  const choices = Array.isArray(listed) ? listed.filter((item): item is string => typeof item === 'string') : [];
  return held !== '' && !choices.includes(held) ? [held, ...choices] : choices;
}

/** What the plugin reports, each field's title and its value as the dashboard writes it. */
function Readouts({ fields, values, moment }: { fields: [string, FormField][]; values: Record<string, unknown>; moment: Intl.DateTimeFormat }) {
  return (
    <dl className="readouts">
      {fields.map(([key, field]) => (
        <div key={key} className="readout">
          <dt>{field.title}</dt>
          <dd>
            {/* Tabular figures for numbers only: they widen a text's hyphens ("sc - domain:"). */}
            <span className={typeof values[key] === 'number' ? 'readout-value numeric' : 'readout-value'}>{shownValue(values[key], field.format, moment)}</span>
            {field.description && <span className="field-hint">{field.description}</span>}
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** The section's form; `timezone` is the site's, whose clock read-only times are written on, as on its dashboard. */
export function PluginSettings({ section, siteId, timezone }: { section: SiteSettingsSection; siteId: string; timezone: string }) {
  const path = section.route.replace('{site}', encodeURIComponent(siteId));
  const moment = useMemo(() => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short', timeZone: timezone }), [timezone]);
  const queries = useQueryClient();
  const current = useQuery({ queryKey: ['plugin-settings', section.plugin, section.id, siteId], queryFn: () => api<Record<string, unknown>>(path) });
  const [values, setValues] = useState<Values | null>(null);
  const [said, setSaid] = useState<string | null>(null);
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (current.data && values === null) {
      setValues(Object.fromEntries(editable(section.schema).map(([key, field]) => [key, field.type === 'boolean' ? current.data[key] === true : asText(current.data[key])])));
    }
  }, [current.data, values, section.schema]);
  const save = useMutation({
    mutationFn: () => api(path, { method: 'PUT', body: toBody(section.schema, values ?? {}) }),
    onSuccess: () => {
      setSaid('Saved.');
      void queries.invalidateQueries({ queryKey: ['plugin-settings', section.plugin, section.id, siteId] });
    },
  });
  // An action changes what the section reads (connected or not, say): read it again, for the values and the buttons that fit.
  const actions = usePluginActions({
    onAnswer: setSaid,
    onDone: () => void queries.invalidateQueries({ queryKey: ['plugin-settings', section.plugin, section.id, siteId] }),
    routeOf: (route) => route.replace('{site}', encodeURIComponent(siteId)),
  });
  const keys = editable(section.schema).map(([key]) => key);
  const readOnly = Object.entries(section.schema.properties).filter(([, field]) => field.readOnly && !field.hidden);
  const { byField, rest } = sortFieldErrors(save.error, (field) => (keys.includes(field) ? field : null));
  useFocusFirstInvalid(form, save.error);
  if (current.isError) return <p className="error">{current.error.message}</p>;
  if (!values) return <p className="muted">Loading…</p>;
  const set = (key: string, value: string | boolean) => {
    setSaid(null);
    setValues({ ...values, [key]: value });
  };
  return (
    <div className="stack" data-testid={`plugin-settings-${section.plugin}-${section.id}`}>
      {section.description && <p className="muted">{section.description}</p>}
      <form ref={form} className="stack" onSubmit={submitHandler(() => save.mutate())} aria-label={section.title} noValidate>
        {editable(section.schema).map(([key, field]) =>
          field.type === 'boolean' ? (
            <label key={key} className="check">
              <input type="checkbox" checked={values[key] === true} onChange={(e) => set(key, e.target.checked)} />
              <span>{field.title}</span>
            </label>
          ) : (
            <div key={key} className="stack tight">
            <Field label={field.title} error={byField[key]} inline={false}>
              {(a11y) =>
                field.enum || field.choicesFrom ? (
                  <select {...a11y} value={String(values[key])} onChange={(e) => set(key, e.target.value)}>
                    {(field.nullable || (field.choicesFrom && values[key] === '')) && <option value="">—</option>}
                    {(field.enum ?? choicesOf(field, current.data ?? {}, String(values[key]))).map((option) => (
                      <option key={option} value={option}>
                        {option}
                      </option>
                    ))}
                  </select>
                ) : (
                  <input
                    {...a11y}
                    type={field.type === 'integer' ? 'number' : 'text'}
                    inputMode={field.type === 'integer' ? 'numeric' : undefined}
                    min={field.minimum}
                    max={field.maximum}
                    maxLength={field.maxLength}
                    required={section.schema.required?.includes(key)}
                    value={String(values[key])}
                    onChange={(e) => set(key, e.target.value)}
                  />
                )
              }
            </Field>
            {field.description && <span className="field-hint">{field.description}</span>}
            </div>
          ),
        )}
        {readOnly.length > 0 && current.data && <Readouts fields={readOnly} values={current.data} moment={moment} />}
        {rest.map((message) => (
          <p key={message} className="error" role="alert">
            {message}
          </p>
        ))}
        <div className="form-actions">
          <button type="submit" className="button primary" disabled={save.isPending}>
            Save
          </button>
          {actions.buttons(section.actions.filter(shownBy(current.data ?? {})))}
        </div>
        <ActionOutcome error={actions.error} said={said} />
      </form>
    </div>
  );
}
