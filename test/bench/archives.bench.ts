// Backup and restore with the archives plugin on a generated data set (default 1 million rows over
// 90 days, `--dataset 10m` for more): a backup of `plumb serve` to a local directory, asked for over
// HTTP and timed until the admin API lists it completed, with the node's memory (VmHWM, VmRSS
// sampled every 100 ms), CPU and event-loop responsiveness (GET /api/status every 50 ms, idle and
// during the backup); then `plumb restore` of it into a fresh data dir as a child process, timed,
// with its peak memory; and a node on the restored dir, whose KPIs over the whole range must be
// the original's.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { silentLog } from '../../lib/log.ts';
import { createSite, createTeam } from '../../lib/sites/sites.ts';
import { openAnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { openMetadataStore } from '../../lib/stores/metadata/index.ts';
import { createUser } from '../../lib/users/users.ts';
import { type Instance, NODE_BIN, ROOT, startInstance, tempDataDir } from '../support/instance.ts';
import { datasetSize, generateDataset } from './dataset.ts';
import { latencyFigure, memoryOf, pollLatency, sampleMemory } from './measure.ts';
import type { BenchSuite } from './run.ts';

const DAY = 86_400_000;
const MiB = 1024 * 1024;
const EMAIL = 'bench@example.com';
const PASSWORD = 'benchmark password';
/** How long GET /api/status is polled on the idle node, for the figure to compare the backup's with. */
const IDLE_MS = 5000;
/** Generous: a backup or restore of 10 million rows on a busy 2-core machine takes minutes. */
const TIMEOUT_MS = 30 * 60_000;
/** The API's rate limits, raised so that the pollers are never answered 429. */
const NODE_ENV = { PLUMB_LOG_LEVEL: 'warn', PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000' };

interface BackupRow {
  id: string;
  status: 'requested' | 'running' | 'completed' | 'failed';
  started_at: string | null;
  finished_at: string | null;
  bytes: number;
  rows: number;
  files: number;
  error: string | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (ms: number) => (ms / 1000).toFixed(1);
const mib = (value: number) => value.toFixed(0);
const thousands = (n: number) => Math.round(n).toLocaleString('en-US');
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' / ');


/** CPU seconds (user + system) a process has used: /proc/<pid>/stat counts them in USER_HZ ticks, 100 a second on Linux. */
async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}




/** Checks `check` every `everyMs` until it returns a value; throws `what()` after TIMEOUT_MS. */
async function until<T>(check: () => Promise<T | undefined>, everyMs: number, what: () => string): Promise<T> {
  const deadline = Date.now() + TIMEOUT_MS;
  while (Date.now() < deadline) {
    const found = await check();
    if (found !== undefined) return found;
    await sleep(everyMs);
  }
  throw new Error(what());
}

/** The owner's session on a node: GET and POST as them. */
async function signedIn(node: Instance) {
  const login = await fetch(`${node.url}/api/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: EMAIL, password: PASSWORD }) });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${await login.text()}`);
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const call = async (method: string, path: string, expected: number) => {
    const res = await fetch(`${node.url}${path}`, { method, headers: { Cookie: cookie } });
    const body = await res.text();
    if (res.status !== expected) throw new Error(`${method} ${path}: ${res.status} ${body.slice(0, 300)}`);
    return JSON.parse(body) as Record<string, unknown>;
  };
  return {
    get: (path: string) => call('GET', path, 200),
    post: (path: string) => call('POST', path, 202),
    backups: async () => (await call('GET', '/api/plugins/archives/backups', 200)).backups as BackupRow[],
  };
}

/** A backup's row once it has finished; throws, with the node's last words, when it failed. */
function finished(node: Instance, row: BackupRow | undefined): BackupRow | undefined {
  if (row?.status === 'failed') throw new Error(`backup ${row.id} failed: ${row.error}\n${node.output().slice(-3000)}`);
  return row?.status === 'completed' ? row : undefined;
}

const rowDuration = (row: BackupRow) => Date.parse(row.finished_at!) - Date.parse(row.started_at!);

/** Runs `plumb restore` as a child process, sampling its memory; its output, wall time and sampled peak RSS. */
async function restoreInto(target: string, dataDir: string) {
  const started = performance.now();
  const child = spawn(NODE_BIN, [join(ROOT, 'bin/plumb.ts'), 'restore', '--from', target, '-data-dir', dataDir], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PLUMB_LOG_LEVEL: 'warn' },
  });
  const memory = sampleMemory(child.pid!);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timeout = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timeout);
  const ms = performance.now() - started;
  const { hwm } = memory.stop();
  if (code !== 0) throw new Error(`plumb restore exited with ${code}:\n${stderr}${stdout}`);
  const counts = /: (\d+) metadata rows, (\d+) analytics rows/.exec(stdout);
  if (!counts) throw new Error(`plumb restore did not say what it restored:\n${stdout}`);
  return { ms, hwm, metadataRows: Number(counts[1]), analyticsRows: Number(counts[2]) };
}

const suite: BenchSuite = {
  name: 'archives',
  description: 'backup (to a directory) and restore of a generated data set with the archives plugin (default 1 million rows, 90 days)',
  async run(args) {
    const rows = datasetSize(args, 1_000_000);
    const figures: Record<string, string | number> = { 'load average at start (1 / 5 / 15 min)': loadAverage() };
    const dataDir = tempDataDir('plumb-bench-archives-');
    const restoredDir = tempDataDir('plumb-bench-restored-');
    const target = mkdtempSync(join(tmpdir(), 'plumb-bench-archives-target-'));
    const env = { ...NODE_ENV, PLUMB_PLUGINS: 'archives', PLUMB_ARCHIVES_TARGET: target };
    let node: Instance | undefined;
    try {
      const metadata = await openMetadataStore({ dataDir, log: silentLog });
      const team = await createTeam(metadata, { name: 'bench' });
      const site = await createSite(metadata, { teamId: team.id, domain: 'bench.example' });
      const owner = await createUser(metadata, { email: EMAIL, password: PASSWORD, role: 'owner' });
      await metadata.query("INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'owner')", [team.id, owner.id]);
      await metadata.close();
      const analytics = await openAnalyticsStore({ dataDir, log: silentLog });
      const generated = await generateDataset(analytics, { rows, days: 90, siteId: site.id, teamId: team.id, end: new Date() });
      await analytics.close();
      figures['rows generated (hits + events)'] = `${thousands(generated.hits + generated.events)} in ${seconds(generated.ms)} s (visits rebuilt from them)`;

      // The first start makes a backup at once (there is none yet). It is left to finish, and the node
      // restarted, so that the backup measured is the first heavy work of its process: its memory
      // figures are the backup's, not a leftover of the one before.
      node = await startInstance({ dataDir, env, timeoutMs: TIMEOUT_MS });
      const firstApi = await signedIn(node);
      const first = await until(async () => finished(node!, (await firstApi.backups())[0]), 500, () => 'the start-up backup did not finish');
      figures['start-up backup, started → finished (s)'] = seconds(rowDuration(first));
      await node.stop();

      node = await startInstance({ dataDir, env, timeoutMs: TIMEOUT_MS });
      const pid = node.child.pid!;
      const api = await signedIn(node);
      const statusUrl = `${node.url}/api/status`;
      const idle = await (async () => {
        const poller = pollLatency(statusUrl);
        await sleep(IDLE_MS);
        return poller.stop();
      })();
      const before = await memoryOf(pid);
      const cpuBefore = await cpuSecondsOf(pid);
      const memory = sampleMemory(pid);
      const during = pollLatency(statusUrl);
      const asked = performance.now();
      const { id } = (await api.post('/api/plugins/archives/backups')).backup as BackupRow;
      const backup = await until(async () => finished(node!, (await api.backups()).find((row) => row.id === id)), 100, () => `backup ${id} did not finish`);
      const backupMs = performance.now() - asked;
      const duringLatencies = await during.stop();
      const sampled = memory.stop();
      const after = await memoryOf(pid);
      const cpu = (await cpuSecondsOf(pid)) - cpuBefore;
      // The figures a restore must give back: every row of the site, whatever the day. Asked for
      // after the backup, so that the memory figures above are the backup's alone.
      const whole = new URLSearchParams({ from: new Date(Date.now() - 92 * DAY).toISOString().slice(0, 10), to: new Date(Date.now() + 2 * DAY).toISOString().slice(0, 10) });
      const kpisPath = `/api/sites/${site.id}/stats/kpis?${whole}`;
      const original = await api.get(kpisPath);
      await node.stop();
      node = undefined;

      const manifest = JSON.parse(readFileSync(join(target, 'backups', id, 'manifest.json'), 'utf8')) as {
        analytics: { tables: { name: string; rows: number; bytes: number }[] }[];
      };
      const tables = manifest.analytics.flatMap((database) => database.tables).filter((table) => table.rows > 0);
      figures['backup, request → completed (s)'] = seconds(backupMs);
      figures['backup, started → finished by its row (s)'] = seconds(rowDuration(backup));
      figures['backup rows / files / size'] = `${thousands(backup.rows)} rows, ${backup.files} files, ${(backup.bytes / MiB).toFixed(1)} MiB (${(backup.bytes / backup.rows).toFixed(1)} B a row)`;
      figures['backup analytics tables (rows, MiB)'] = tables.map((table) => `${table.name} ${thousands(table.rows)} ${(table.bytes / MiB).toFixed(1)}`).join(', ');
      figures['backup rows/s (request → completed)'] = thousands(backup.rows / (backupMs / 1000));
      figures['node VmHWM before → after the backup (MiB)'] = `${mib(before.hwm)} → ${mib(after.hwm)} (+${mib(after.hwm - before.hwm)})`;
      figures['node VmRSS before → peak sampled during (MiB)'] = `${mib(before.rss)} → ${mib(sampled.peakRss)} (+${mib(sampled.peakRss - before.rss)})`;
      figures['node CPU during the backup (s, both cores)'] = cpu.toFixed(1);
      figures['GET /api/status idle p50 / p99 / max (ms)'] = latencyFigure(idle);
      figures['GET /api/status in the backup p50 / p99 / max'] = latencyFigure(duringLatencies);

      const restored = await restoreInto(target, restoredDir);
      const restoredRows = restored.metadataRows + restored.analyticsRows;
      figures['restore, spawn → exit (s)'] = seconds(restored.ms);
      figures['restore rows/s'] = `${thousands(restoredRows / (restored.ms / 1000))} (${thousands(restoredRows)} rows)`;
      figures['restore peak RSS (VmHWM sampled, MiB)'] = mib(restored.hwm);

      node = await startInstance({ dataDir: restoredDir, env: NODE_ENV, timeoutMs: TIMEOUT_MS });
      const copy = await (await signedIn(node)).get(kpisPath);
      await node.stop();
      node = undefined;
      const { kpis } = original as { kpis: { pageviews: number; visitors: number } };
      figures['restored figures identical'] = isDeepStrictEqual(copy, original)
        ? `yes (whole-range KPIs: ${thousands(kpis.pageviews)} pageviews, ${thousands(kpis.visitors)} visitors)`
        : `no: original ${JSON.stringify(original)}, restored ${JSON.stringify(copy)}`;
      figures['load average at end (1 / 5 / 15 min)'] = loadAverage();
      return figures;
    } finally {
      await node?.stop('SIGKILL');
      for (const dir of [dataDir, restoredDir, target]) rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default suite;
