// The optional web-vitals add-on (built to dist/tracker/plumb-vitals.js): posts each final LCP,
// INP, CLS, FCP and TTFB value to /ingest/web-vitals on the instance that served this script.
//
// It is a separate file so pages that do not want vitals never pay for the web-vitals library.
// It repeats the tracker's privacy switches and transport on purpose: plumb.ts is one IIFE sized
// to its budget, and the two scripts must work alone. Its own tag takes data-ignore-dnt and
// data-allow-localhost, with the same meaning as on plumb.js.
import { type Metric, onCLS, onFCP, onINP, onLCP, onTTFB } from 'web-vitals';

type Win = Window & { plumbIgnore?: boolean; doNotTrack?: string };
type Nav = Navigator & { globalPrivacyControl?: boolean };

((w: Win, d: Document, n: Nav, l: Location) => {
  const s = d.currentScript as HTMLScriptElement | null;
  if (!s) return;
  const on = (a: string) => s.hasAttribute('data-' + a);
  let ignored = w.plumbIgnore === true;
  try {
    ignored ||= localStorage.plumb_ignore === 'true';
  } catch {}
  if (
    ignored ||
    ((n.doNotTrack === '1' || w.doNotTrack === '1' || n.globalPrivacyControl === true) && !on('ignore-dnt')) ||
    ((/^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$|\.localhost$/.test(l.hostname) || l.protocol === 'file:') && !on('allow-localhost'))
  ) {
    return;
  }

  const endpoint = new URL('/ingest/web-vitals', s.src).href;
  const queue: string[] = [];
  const post = (body: string) => {
    if (n.sendBeacon?.(endpoint, new Blob([body], { type: 'text/plain' }))) return;
    const retry = () => {
      if (queue.length < 10) queue.push(body);
    };
    fetch(endpoint, { method: 'POST', body, keepalive: true, credentials: 'omit', headers: { 'Content-Type': 'text/plain' } }).then((r) => {
      if (r.status > 499) retry();
    }, retry);
  };
  const flush = () => {
    for (const body of queue.splice(0)) post(body);
  };
  const report = (m: Metric) => {
    flush();
    post(JSON.stringify({ url: l.href, metric: m.name, value: m.value, rating: m.rating }));
  };
  w.addEventListener('online', flush);
  d.addEventListener('visibilitychange', () => {
    if (d.visibilityState === 'hidden') flush();
  });
  onLCP(report);
  onINP(report);
  onCLS(report);
  onFCP(report);
  onTTFB(report);
})(window as Win, document, navigator as Nav, location);
