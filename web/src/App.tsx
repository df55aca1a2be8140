// The dashboard shell: instance status from /api/status until the signed-in views exist.
import { useEffect, useState } from 'react';

interface InstanceStatus {
  version: string;
  ready: boolean;
}

export function App() {
  const [status, setStatus] = useState<InstanceStatus | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    fetch('/api/status', { credentials: 'same-origin' })
      .then((res) => (res.ok ? res.json() : Promise.reject(new Error(`HTTP ${res.status}`))))
      .then((body: InstanceStatus) => !cancelled && setStatus(body))
      .catch((err: Error) => !cancelled && setError(err.message));
    return () => {
      cancelled = true;
    };
  }, []);

  return (
    <main className="shell">
      <header>
        <h1>Plumb</h1>
        <p>Privacy-first web analytics</p>
      </header>
      <section aria-live="polite" className="status">
        {error && <p role="alert">Cannot reach the instance: {error}</p>}
        {!error && !status && <p>Connecting…</p>}
        {status && (
          <p>
            Instance {status.ready ? 'ready' : 'starting'} · version <span data-testid="version">{status.version}</span>
          </p>
        )}
      </section>
    </main>
  );
}
