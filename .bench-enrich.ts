import { openGeoDatabase } from './lib/ingest/enrich/geo.ts';
import { parseUserAgent } from './lib/ingest/enrich/user-agent.ts';
import { isBotRequest } from './lib/ingest/enrich/bots.ts';
import { classifyReferrer } from './lib/ingest/enrich/referrer.ts';
import { parsePageUrl } from './lib/ingest/enrich/url.ts';
import { clientIp } from './lib/ingest/enrich/client-ip.ts';
import { visitorHash } from './lib/ingest/enrich/visitor.ts';
const geo = await openGeoDatabase();
const uas = [
 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1',
 'Mozilla/5.0 (Linux; Android 13; SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36',
 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0',
];
const refs = [undefined, 'https://www.google.com/', 'https://chatgpt.com/', 'https://example.com/prev', 'https://some-blog.net/post/1', 'https://l.facebook.com/l.php?u=x'];
const urls = ['https://www.example.com/', 'https://example.com/blog/post-1?utm_source=newsletter&utm_medium=email&utm_campaign=may', 'https://example.com/pricing#plans', 'https://example.com/docs/a/b/c?ref=producthunt'];
const ips = Array.from({ length: 1000 }, (_, i) => i % 5 === 0 ? `2a00:1450:${(i % 4000).toString(16)}::${i}` : `${(i * 37) % 223 + 1}.${(i * 11) % 256}.${(i * 7) % 256}.${i % 256}`);
const salt = new Uint8Array(32).fill(7);
let sink = 0;
function event(i: number) {
  const ua = uas[i % uas.length];
  if (isBotRequest(ua, { 'accept-language': 'en' })) return;
  const ip = clientIp(ips[i % ips.length], {}, 0);
  const page = parsePageUrl(urls[i % urls.length])!;
  const agent = parseUserAgent(ua, 1280);
  const ref = classifyReferrer(refs[i % refs.length], page.hostname, page.utm.utm_source, page.utm.utm_medium);
  const place = geo.lookup(ip);
  const id = visitorHash(salt, 'site-uuid', ip, ua);
  sink += agent.browser.length + ref.source_name.length + place.country.length + id.length;
}
for (let i = 0; i < 200_000; i++) event(i);
for (let round = 0; round < 3; round++) {
  const n = 500_000; const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) event(i);
  console.log('warm per event µs', (Number(process.hrtime.bigint() - t) / 1000 / n).toFixed(2));
}
const part = (name: string, f: (i: number) => void) => { const n = 300_000; for (let i = 0; i < 50_000; i++) f(i); const t = process.hrtime.bigint(); for (let i = 0; i < n; i++) f(i); console.log(name.padEnd(16), (Number(process.hrtime.bigint() - t) / 1000 / n).toFixed(3), 'µs'); };
part('isBotRequest', (i) => { sink += +isBotRequest(uas[i % 5]); });
part('clientIp', (i) => { sink += clientIp(ips[i % 1000], {}, 0).length; });
part('parsePageUrl', (i) => { sink += parsePageUrl(urls[i % 4])!.path.length; });
part('parseUserAgent', (i) => { sink += parseUserAgent(uas[i % 5], 1280).os.length; });
part('classifyReferrer', (i) => { sink += classifyReferrer(refs[i % 6], 'example.com').source_name.length; });
part('geo.lookup', (i) => { sink += geo.lookup(ips[i % 1000]).country.length; });
part('visitorHash', (i) => { sink += visitorHash(salt, 's', ips[i % 1000], uas[i % 5]).length; });
{ const n = 20_000; const t = process.hrtime.bigint(); for (let i = 0; i < n; i++) { const ua = uas[i % 5].replace('537.36', `537.${i}`); sink += +isBotRequest(ua) + parseUserAgent(ua).browser.length; } console.log('cold UA (bot+parse) µs', (Number(process.hrtime.bigint() - t) / 1000 / n).toFixed(2)); }
console.log(sink > 0, require('node:os').cpus()[0].model);
