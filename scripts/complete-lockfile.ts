// Adds lock entries for other platforms' optional binaries (biome, chdb, jest's resolver…) that
// `npm install` leaves out when the registry it reaches does not serve them; without them
// `npm ci` refuses the lock. Run after every `npm install`: `npm run lockfile:complete`.
// The entries carry os/cpu/libc, so npm never fetches them on a platform they are not for.
import { readFileSync, writeFileSync } from 'node:fs';

interface LockEntry {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  os?: string[];
  cpu?: string[];
  libc?: string[];
  optionalDependencies?: Record<string, string>;
}

const OS = ['darwin', 'win32', 'android', 'freebsd', 'openharmony', 'linux'];
const CPU: [RegExp, string][] = [
  [/arm64|aarch64/, 'arm64'],
  [/x64/, 'x64'],
  [/ia32/, 'ia32'],
  [/-arm-/, 'arm'],
  [/loong64/, 'loong64'],
  [/ppc64/, 'ppc64'],
  [/riscv64/, 'riscv64'],
  [/s390x/, 's390x'],
];

/** Names of optional dependencies that have no entry in the lock. */
export function missingOptionalEntries(packages: Record<string, LockEntry>): { name: string; spec: string; dev: boolean }[] {
  const missing = new Map<string, { name: string; spec: string; dev: boolean }>();
  for (const [path, entry] of Object.entries(packages)) {
    for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
      if (packages[`node_modules/${name}`] || packages[`${path}/node_modules/${name}`]) continue;
      const seen = missing.get(name);
      missing.set(name, { name, spec, dev: (seen?.dev ?? true) && entry.dev === true });
    }
  }
  return [...missing.values()];
}

export function platformEntry(name: string, spec: string, dev: boolean): LockEntry {
  const entry: LockEntry = { version: spec.replace(/^[\^~=]/, ''), optional: true, os: [OS.find((os) => name.includes(os)) ?? 'linux'] };
  const cpu = CPU.find(([pattern]) => pattern.test(name));
  if (cpu) entry.cpu = [cpu[1]];
  if (name.includes('musl')) entry.libc = ['musl'];
  else if (name.includes('gnu')) entry.libc = ['glibc'];
  if (dev) entry.dev = true;
  return entry;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const path = new URL('../package-lock.json', import.meta.url);
  const lock = JSON.parse(readFileSync(path, 'utf8')) as { packages: Record<string, LockEntry> };
  const missing = missingOptionalEntries(lock.packages);
  for (const { name, spec, dev } of missing) lock.packages[`node_modules/${name}`] = platformEntry(name, spec, dev);
  lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b, 'en'))));
  writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(`package-lock.json: added ${missing.length} platform entries`);
}
