// The Plumb tracking script (built to dist/tracker/plumb.js, ≤ 1,536 bytes gzipped): pageviews
// (SPA-aware), custom events, automatic outbound/download/form events and engagement time, posted
// to the instance that served the script. No cookies, no storage writes, no identifiers on the device.
//
// Written for size: esbuild shortens locals but never property names or strings, so the code
// keeps few distinct names and string literals. Script-tag switches:
//   data-no-outbound, data-no-downloads, data-no-forms  turn one automatic event off
//   data-ignore-dnt                                     track despite Do Not Track / Global Privacy Control
//   data-allow-localhost                                track on localhost, 127.*, [::1] and file: pages

type Props = Record<string, string | number | boolean>;
type Plumb = ((...args: unknown[]) => void) & { q?: ArrayLike<unknown>[] };
type Win = Window & { plumb?: Plumb; plumbIgnore?: boolean; doNotTrack?: string };
type Doc = Document & { prerendering?: boolean };
type Nav = Navigator & { globalPrivacyControl?: boolean };
type Hist = Record<string, (...args: unknown[]) => void>;

((w: Win, d: Doc, n: Nav, l: Location) => {
  const s = d.currentScript as HTMLScriptElement | null;
  if (!s) return;
  const on = (a: string) => s.hasAttribute('data-' + a);
  const add = (t: EventTarget, e: string, f: (e: Event) => void, c?: boolean) => t.addEventListener(e, f, c);
  let ignored = w.plumbIgnore === true;
  try {
    // Set by the site owner (in their own browser) to leave themself out; only ever read here.
    ignored ||= localStorage.plumb_ignore === 'true';
  } catch {}
  if (
    ignored ||
    ((n.doNotTrack === '1' || w.doNotTrack === '1' || n.globalPrivacyControl === true) && !on('ignore-dnt')) ||
    ((/^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$|\.localhost$/.test(l.hostname) || l.protocol === 'file:') && !on('allow-localhost'))
  ) {
    // A no-op keeps pages that call plumb() working; queued calls are simply dropped.
    w.plumb = () => {};
    return;
  }

  // Transport: sendBeacon survives unload; when it is missing or refuses (size/quota), a keepalive
  // fetch does the same job. Fetches that fail (network, 5xx) wait in memory for the next chance.
  const queue: [string, string][] = [];
  const post = (url: string, body: string) => {
    if (n.sendBeacon?.(url, new Blob([body], { type: 'text/plain' }))) return;
    const retry = () => {
      if (queue.length < 10) queue.push([url, body]);
    };
    fetch(url, { method: 'POST', body, keepalive: true, credentials: 'omit', headers: { 'Content-Type': 'text/plain' } }).then((r) => {
      if (r.status > 499) retry();
    }, retry);
  };
  const flush = () => {
    for (const [url, body] of queue.splice(0)) post(url, body);
  };
  const send = (path: string, data: object) => {
    flush();
    // Relative to the script's own URL, so a custom tracking host receives its own data.
    post(new URL(path, s.src).href, JSON.stringify(data));
  };
  const page = (url = l.href) => ({ url, referrer: d.referrer || undefined, width: w.innerWidth });
  const event = (name: string, props: unknown) => send('/ingest/event', { ...page(), name, props: props || {} });

  // Engagement: milliseconds the page was both visible and focused, summed between sends.
  let engaged = 0;
  let since: number | false = false;
  const tick = () => {
    const now = performance.now();
    if (since !== false) engaged += now - since;
    since = d.visibilityState === 'visible' && d.hasFocus() && now;
  };
  let current: string | undefined;
  const engagement = () => {
    tick();
    const ms = Math.round(engaged);
    engaged = 0;
    if (ms && current) send('/ingest/event', { ...page(current), name: '$engagement', engagement_ms: ms });
  };
  const hide = () => {
    engagement();
    // pagehide comes before the page turns hidden: it is being left, so stop the clock until
    // it is shown again (bfcache restore).
    since = false;
    flush();
  };
  add(d, 'visibilitychange', () => (d.visibilityState === 'hidden' ? hide() : tick()));
  add(w, 'pagehide', hide);
  add(w, 'focus', tick);
  add(w, 'blur', tick);
  add(w, 'online', flush);
  tick();

  // Pageviews: one per distinct href; the same href within 1 s is one view (replaceState to the
  // same URL, a pushState and hashchange for one click). A prerendered page counts when shown.
  const seen: Record<string, number> = {};
  const view = () => {
    const href = l.href;
    const now = Date.now();
    if (d.prerendering || href === current) return;
    engagement(); // for the page being left, still under its own URL
    current = href;
    if (now - seen[href] < 1000) return;
    seen[href] = now;
    send('/ingest', page());
  };
  const h = history as unknown as Hist;
  for (const k of ['pushState', 'replaceState']) {
    const original = h[k];
    h[k] = function (this: History, ...args: unknown[]) {
      original.apply(this, args);
      view();
    };
  }
  add(w, 'popstate', view);
  add(w, 'hashchange', view);
  add(d, 'prerenderingchange', view);

  // Automatic events, on capture so pages that stop propagation still count; nothing is delayed.
  // A file link is a download wherever it points; with downloads off, one to another host is
  // still an outbound link. Middle-click arrives as auxclick (button 1).
  const click = (e: Event) => {
    const a = (e.target as Element).closest?.('a[href]') as HTMLAnchorElement | null;
    if (!a || (e.type === 'auxclick' && (e as MouseEvent).button !== 1) || !/^https?:$/.test(a.protocol)) return;
    const name =
      !on('no-downloads') &&
      /\.(pdf|xlsx?|csv|docx?|pptx?|txt|rtf|zip|t?gz|7z|rar|dmg|exe|msi|pkg|deb|rpm|apk|iso|mp[34]|mov|avi|wav|epub|json|xml)$/i.test(a.pathname)
        ? 'File Download'
        : !on('no-outbound') && a.hostname !== l.hostname
          ? 'Outbound Link: Click'
          : '';
    // A property value holds at most 256 characters; a longer link would have the event refused.
    if (name) event(name, { url: a.href.slice(0, 256) });
  };
  add(d, 'click', click, true);
  add(d, 'auxclick', click, true);
  if (!on('no-forms')) {
    add(
      d,
      'submit',
      (e) => {
        // getAttribute, because form.id / form.name return a field when one is named "id" or "name".
        const f = e.target as HTMLFormElement;
        event('Form: Submission', { path: l.pathname.slice(0, 256), form: (f.getAttribute('id') || f.getAttribute('name') || '').slice(0, 256) });
      },
      true,
    );
  }

  // plumb('event', name, props), replaying calls queued by the stub before this script loaded.
  const queued = w.plumb?.q || [];
  const plumb = (command: unknown, name: unknown, props?: Props) => {
    if (command === 'event' && typeof name === 'string') event(name, props);
  };
  w.plumb = plumb as Plumb;
  view();
  for (const args of Array.from(queued)) plumb.apply(w, args as [unknown, unknown, Props]);
})(window as Win, document as Doc, navigator as Nav, location);
