// The live view: visitors in the last five minutes, their pages and the latest events, pushed by
// the server as Server-Sent Events.
import { useEffect, useState } from 'react';
import type { RealtimeSnapshot } from '../api.ts';

const time = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit', second: '2-digit' });

export function Realtime({ base }: { base: string }) {
  const [snapshot, setSnapshot] = useState<RealtimeSnapshot | null>(null);
  const [lost, setLost] = useState(false);
  useEffect(() => {
    const source = new EventSource(`${base}/realtime`);
    source.addEventListener('snapshot', (e) => {
      setLost(false);
      setSnapshot(JSON.parse((e as MessageEvent<string>).data));
    });
    source.onerror = () => setLost(true);
    return () => source.close();
  }, [base]);

  return (
    <section aria-label="Realtime" className="realtime">
      <div className="card live">
        <p className="kpi-label">
          <span className="pulse" aria-hidden /> Visitors right now
        </p>
        <p className="kpi-value" data-testid="live-visitors">
          {snapshot ? snapshot.live_visitors : '–'}
        </p>
        <p className="muted small">{lost ? 'Reconnecting…' : snapshot ? `Updated ${time.format(new Date(snapshot.at))}` : 'Connecting…'}</p>
      </div>
      <div className="panels">
        <section className="card panel" aria-labelledby="rt-pages">
          <h2 id="rt-pages">Current pages</h2>
          {snapshot && snapshot.current_pages.length === 0 && <p className="muted small">Nobody is on the site right now.</p>}
          <ol className="rows">
            {snapshot?.current_pages.map((p) => (
              <li key={p.path} className="row static">
                <span className="row-label">{p.path}</span>
                <span className="row-value">{p.visitors}</span>
              </li>
            ))}
          </ol>
        </section>
        <section className="card panel" aria-labelledby="rt-events">
          <h2 id="rt-events">Recent events</h2>
          {snapshot && snapshot.recent_events.length === 0 && <p className="muted small">No events today yet.</p>}
          <ol className="rows">
            {snapshot?.recent_events.map((e, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: two events of one name and millisecond are indistinguishable otherwise
              <li key={`${e.ts}-${i}`} className="row static">
                <span className="row-label">
                  {e.name} <span className="muted">on {e.path}</span>
                </span>
                <span className="row-value">{time.format(new Date(e.ts))}</span>
              </li>
            ))}
          </ol>
        </section>
      </div>
    </section>
  );
}
