// A plugin's action buttons (on its admin page, in a site-settings section, above a site panel),
// one way everywhere: each POSTs to its route after its confirm, one runs at a time, the focus comes back to the button
// that ran, and the answer's `message` (or the error) shows beside them; a button that opens a URL
// sends the browser on to the answer's `url` instead.
import { useMutation } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { api, problem } from '../api.ts';
import { refocus } from './plugin-dashboard.ts';

interface ActionButton {
  id: string;
  label: string;
  route: string;
  confirm?: string;
  opens_url?: boolean;
}

/** Only a web address may be opened: never `javascript:` or another scheme an answer could carry. */
const openable = (url: unknown): url is string => typeof url === 'string' && /^https?:\/\//i.test(url);

/**
 * `onAnswer` hears the message to show (null when a button starts), `onDone` runs after a success
 * (to read panels again); `routeOf` fills a route's placeholders; `body` is what each POST sends
 * (a site panel's range), `{}` without it.
 */
export function usePluginActions(options: { onAnswer(message: string | null): void; onDone?(): void; routeOf?(route: string): string; body?: Record<string, string> }) {
  const clicked = useRef<HTMLButtonElement | null>(null);
  const act = useMutation({
    mutationFn: (action: ActionButton) =>
      api<{ message?: unknown; url?: unknown }>(options.routeOf ? options.routeOf(action.route) : action.route, { method: 'POST', body: options.body ?? {} }),
    onMutate: () => options.onAnswer(null),
    onSuccess: (answer, action) => {
      if (action.opens_url && openable(answer?.url)) {
        window.location.assign(answer.url);
        return;
      }
      options.onAnswer(typeof answer?.message === 'string' ? answer.message : 'Done.');
      options.onDone?.();
    },
  });
  useEffect(() => {
    if (!act.isPending) refocus(clicked.current);
  }, [act.isPending]);
  const buttons = (actions: readonly ActionButton[]) =>
    actions.map((action) => (
      <button
        key={action.id}
        type="button"
        className="button"
        disabled={act.isPending}
        onClick={(event) => {
          if (action.confirm && !confirm(action.confirm)) return;
          clicked.current = event.currentTarget;
          act.mutate(action);
        }}
      >
        {action.label}
      </button>
    ));
  return { buttons, error: act.error };
}

/** What the last action (or save) answered: its error, else its message. */
export function ActionOutcome({ error, said }: { error: Error | null; said: string | null }) {
  return (
    <>
      {error && (
        <p className="error" role="alert">
          {problem(error)}
        </p>
      )}
      {said && <p role="status">{said}</p>}
    </>
  );
}
