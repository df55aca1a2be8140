// A form field whose server-side validation error (400 `validation_failed`, `fields`) shows right
// under it: the input is marked invalid and described by the message, which sits outside the
// label so the field's name stays just its name.
import { type ReactElement, type ReactNode, useEffect, useId, type RefObject } from 'react';
import { ApiError, fieldMessage, namedMessage } from '../api.ts';

export interface FieldA11y {
  id: string;
  'aria-invalid'?: true;
  'aria-describedby'?: string;
}

export function Field({ label, error, inline = true, hideLabel = false, children }: { label: ReactNode; error?: string; inline?: boolean; hideLabel?: boolean; children(a11y: FieldA11y): ReactElement }) {
  const id = useId();
  const control = `${id}-control`;
  return (
    <div className={inline ? 'field inline' : 'field'}>
      <label className="field" htmlFor={control}>
        <span className={hideLabel ? 'visually-hidden' : undefined}>{label}</span>
        {children(error ? { id: control, 'aria-invalid': true, 'aria-describedby': id } : { id: control })}
      </label>
      {error && (
        <span className="field-error" id={id}>
          {error}
        </span>
      )}
    </div>
  );
}

/**
 * The server's field errors sorted onto the form's fields: `place` names the form field a server
 * field belongs to (or null). What no field takes is returned as `rest`, to show for the form.
 */
export function sortFieldErrors(err: unknown, place: (field: string) => string | null): { byField: Record<string, string>; rest: string[] } {
  const byField: Record<string, string> = {};
  const rest: string[] = [];
  if (!(err instanceof ApiError)) return { byField, rest };
  for (const { field, message } of err.fields) {
    const target = place(field);
    if (target === null) rest.push(namedMessage(field, message));
    else {
      const said = fieldMessage(field, message);
      byField[target] = byField[target] ? `${byField[target]}; ${said}` : said;
    }
  }
  return { byField, rest };
}

/** After a failed save, focus moves to the first field marked invalid. */
export function useFocusFirstInvalid(form: RefObject<HTMLFormElement | null>, error: unknown) {
  useEffect(() => {
    if (error) form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [error, form]);
}

/** An edit form opened in place: focus moves into it, to its first field. */
export function useFocusFirstField(form: RefObject<HTMLFormElement | null>, open: boolean) {
  useEffect(() => {
    if (open) form.current?.querySelector<HTMLElement>('input, select')?.focus();
  }, [open, form]);
}
