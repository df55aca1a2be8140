// The busy flag and error message of a button or form that calls the server.
import { useState } from 'react';
import { problem } from './api.ts';

/** An action that calls the server from a button or form: `run` marks it busy, clears the last message and keeps the message of what went wrong. */
export function useBusyAction() {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (work: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (err) {
      setError(problem(err));
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run };
}
