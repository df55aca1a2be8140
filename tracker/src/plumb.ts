// The Plumb tracking script: a pageview per page and `plumb('event', name, props)`, posted to the
// instance that served this script. No cookies, no storage, no identifiers on the device.
interface PlumbWindow extends Window {
  plumb?: ((...args: unknown[]) => void) & { q?: unknown[][] };
}

((w: PlumbWindow, d: Document) => {
  const script = d.currentScript as HTMLScriptElement | null;
  if (!script) return;
  // Endpoints resolve against the script's own URL, so custom tracking hosts just work.
  const endpoint = (path: string) => new URL(path, script.src).href;
  const send = (path: string, payload: Record<string, unknown>) => {
    const body = JSON.stringify(payload);
    const url = endpoint(path);
    if (!navigator.sendBeacon?.(url, new Blob([body], { type: 'text/plain' }))) {
      fetch(url, { method: 'POST', body, keepalive: true, credentials: 'omit', headers: { 'Content-Type': 'text/plain' } }).catch(() => undefined);
    }
  };
  const page = () => ({ url: location.href, referrer: d.referrer || undefined, screen_width: w.innerWidth });
  const pageview = () => send('/ingest', page());
  const queued = w.plumb?.q ?? [];
  w.plumb = (command: unknown, name?: unknown, props?: unknown) => {
    if (command === 'event' && typeof name === 'string') send('/ingest/event', { ...page(), name, props: props ?? {} });
  };
  for (const args of queued) w.plumb(...args);
  pageview();
})(window as PlumbWindow, document);
