// The accessible warning before the session ends: an alert that screen readers announce when it
// appears, the time left, and one button that extends the session.
import { useState } from 'react';
import { problem } from '../api.ts';
import { formatCountdown, useSession, useSessionClock } from '../session.tsx';

export function SessionWarning() {
  const { extend } = useSession();
  const { warning, remaining } = useSessionClock();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    // The live region exists before the warning does, so its content is announced on arrival.
    <div className="session-warning-region" aria-live="assertive">
      {warning && remaining !== null && (
        <div role="alert" className="session-warning">
          <p>
            Your session is about to end. <span aria-hidden>({formatCountdown(remaining)} left)</span>
          </p>
          <button
            type="button"
            className="button primary"
            disabled={busy}
            onClick={async () => {
              setBusy(true);
              setError(null);
              try {
                await extend();
              } catch (err) {
                setError(problem(err));
              } finally {
                setBusy(false);
              }
            }}
          >
            Stay signed in
          </button>
          {error && <p className="error">{error}</p>}
        </div>
      )}
    </div>
  );
}
