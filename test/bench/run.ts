// `npm run bench [-- suite…]`: runs the benchmark suites and prints their figures. Benchmarks are
// measurements, not tests: they never fail on a number, they report it.
import archives from './archives.bench.ts';
import cluster from './cluster.bench.ts';
import dashboard from './dashboard.bench.ts';
import dashboardRender from './dashboard-render.bench.ts';
import exports from './exports.bench.ts';
import footprint from './footprint.bench.ts';
import ingest from './ingest.bench.ts';
import ingestInstructions from './ingest-instructions.bench.ts';
import ingestPipeline from './ingest-pipeline.bench.ts';
import startup from './startup.bench.ts';

export interface BenchSuite {
  name: string;
  description: string;
  run(args: string[]): Promise<Record<string, string | number>>;
}

const SUITES: readonly BenchSuite[] = [startup, ingest, ingestPipeline, ingestInstructions, dashboard, dashboardRender, cluster, archives, exports, footprint];

const args = process.argv.slice(2);
// Suite names are the bare words that are not a flag's value (`--dataset 10m`).
const chosen = args.filter((a, i) => !a.startsWith('-') && !args[i - 1]?.startsWith('--'));
const suites = chosen.length > 0 ? SUITES.filter((s) => chosen.includes(s.name)) : SUITES;
if (suites.length === 0) {
  console.error(`unknown suite; available: ${SUITES.map((s) => s.name).join(', ')}`);
  process.exit(2);
}
for (const suite of suites) {
  console.log(`\n## ${suite.name}: ${suite.description}`);
  const figures = await suite.run(args);
  for (const [name, value] of Object.entries(figures)) console.log(`${name.padEnd(40)} ${value}`);
}
