// The live view: visitors in the last five minutes, their pages and sources, and the latest
// events, pushed by the server as Server-Sent Events. Times are on the site's clock, as every
// other figure of the site is.
import { useEffect, useState } from 'react';
import type { RealtimeSnapshot } from '../api.ts';
import { eventTime, timeOfDay } from './dates.ts';
import { formatCount, formatNumber, NOUNS, nounFor, valueLabel } from './format.ts';
import { SourceIcon } from './SourceIcon.tsx';

function Count({ n }: { n: number }) {
  return (
    <span className="row-value">
      {formatNumber(n)}
      <span className="visually-hidden">{` ${nounFor(n, NOUNS.visitor)}`}</span>
    </span>
  );
}

/** A panel of what the current visitors are on (pages, sources), most visitors first. */
function LiveRows({ id, title, rows, icons = false }: { id: string; title: string; rows?: { key: string; value: string; visitors: number }[]; icons?: boolean }) {
  return (
    <section className="card panel" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {rows && rows.length === 0 && <p className="muted small">Nobody is on the site right now.</p>}
      <ol className="rows">
        {rows?.map((row) => (
          <li key={row.key} className="row static">
            <span className="row-label">
              {icons && <SourceIcon source={row.value} />}
              <span className="row-text">{valueLabel(row.value)}</span>
            </span>
            <Count n={row.visitors} />
          </li>
        ))}
      </ol>
    </section>
  );
}

export function Realtime({ base, timezone }: { base: string; timezone: string }) {
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
          {snapshot ? formatNumber(snapshot.live_visitors) : '–'}
        </p>
        <p className="muted small" data-testid="realtime-status">
          {lost ? 'Reconnecting…' : snapshot ? `Updated ${timeOfDay(snapshot.at, timezone)}` : 'Connecting…'}
          <span className="visually-hidden">{snapshot ? ` (${formatCount(snapshot.live_visitors, NOUNS.currentVisitor)})` : ''}</span>
        </p>
      </div>
      <div className="panels">
        <LiveRows id="rt-pages" title="Current pages" rows={snapshot?.current_pages.map((p) => ({ key: p.path, value: p.path, visitors: p.visitors }))} />
        <LiveRows id="rt-sources" title="Current sources" icons rows={snapshot?.current_sources.map((s) => ({ key: s.source, value: s.source, visitors: s.visitors }))} />
        <section className="card panel" aria-labelledby="rt-events">
          <h2 id="rt-events">Recent events</h2>
          {snapshot && snapshot.recent_events.length === 0 && <p className="muted small">No events today yet.</p>}
          <ol className="rows">
            {snapshot?.recent_events.map((e, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: two events of one name and millisecond are indistinguishable otherwise
              <li key={`${e.ts}-${i}`} className="row static">
                <span className="row-label">
                  <SourceIcon source={e.source} />
                  <span className="row-lines">
                    <span className="row-text">{e.name}</span>
                    <span className="row-text muted small">
                      on {valueLabel(e.path)} · from {valueLabel(e.source)}
                    </span>
                  </span>
                </span>
                <span className="row-value">
                  <time dateTime={e.ts}>{eventTime(e.ts, snapshot.at, timezone)}</time>
                </span>
              </li>
            ))}
          </ol>
        </section>
      </div>
    </section>
  );
}
