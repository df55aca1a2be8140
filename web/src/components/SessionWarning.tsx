// The accessible warning before the session ends: an alert that screen readers announce when it
// appears, the time left, and one button that extends the session.
import { useBusyAction } from '../busy.ts';
import { formatCountdown, useSession, useSessionClock } from '../session.tsx';

export function SessionWarning() {
  const { extend } = useSession();
  const { warning, remaining } = useSessionClock();
  const { error, busy, run } = useBusyAction();
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
            onClick={() => void run(extend)}
          >
            Stay signed in
          </button>
          {error && <p className="error">{error}</p>}
        </div>
      )}
    </div>
  );
}
