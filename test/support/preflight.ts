// Runs first in `npm test`: checks in a few seconds that the local services the suites need are
// reachable and that Chromium is installed, and says how to start what is missing, instead of
// letting hundreds of tests fail one by one on a machine that lacks them.
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { CHROMIUM_PATH, LOCAL_SERVICES, type LocalService } from './services.ts';

const CONNECT_TIMEOUT_MS = 1500;

function reachable(service: LocalService): Promise<boolean> {
  const url = new URL(service.url);
  const port = Number(url.port || service.defaultPort);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(CONNECT_TIMEOUT_MS, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

const results = await Promise.all(LOCAL_SERVICES.map(async (service) => ({ service, up: await reachable(service) })));
const down = results.filter((r) => !r.up).map((r) => r.service);
const chromiumMissing = !existsSync(CHROMIUM_PATH);

if (down.length > 0 || chromiumMissing) {
  const lines = ['', 'npm test needs these local services, and cannot reach them:', ''];
  for (const service of down) {
    lines.push(`  ${service.name} at ${new URL(service.url).host} (set ${service.env} to use another)`);
    lines.push(`    start it: ${service.start}`);
  }
  if (chromiumMissing) {
    lines.push(`  Chromium at ${CHROMIUM_PATH} (set PLUMB_CHROMIUM to use another)`);
    lines.push('    install it: apt-get install -y chromium');
  }
  lines.push('', 'Or run `bash .ci/run`, which starts them (on Debian) and then runs the tests.', '');
  process.stderr.write(`${lines.join('\n')}\n`);
  process.exit(1);
}
