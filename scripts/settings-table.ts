// Prints the README's settings table from lib/config.ts, so the documentation is generated from
// the one list the loader reads: `node scripts/settings-table.ts`.
import { SETTINGS } from '../lib/config.ts';

export function settingsTable(): string {
  const rows = SETTINGS.map((s) => {
    const def = s.default === undefined || (Array.isArray(s.default) && s.default.length === 0) ? '(unset)' : `\`${String(s.default)}\``;
    return `| \`-${s.flag}\` | ${s.env.map((e) => `\`${e}\``).join(', ')} | ${def} | ${s.description.replace(/\|/g, '\\|')} |`;
  });
  return ['| flag | env | default | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(settingsTable());
