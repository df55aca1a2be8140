#!/usr/bin/env node
// The `plumb` command: `plumb serve` runs a node; `plumb --help` lists every setting.
import { helpText, loadConfig, parseArgs } from '../lib/config.ts';
import { ConfigError } from '../lib/errors.ts';
import { flushCompileCache } from 'node:module';
import { applyProcessSettings } from '../lib/process-settings.ts';
import { keepTickObjectShapes } from '../lib/tick-objects.ts';

// Before anything else: a full garbage collection must not drop the first tick objects' shapes (lib/tick-objects.ts).
keepTickObjectShapes();

const HARD_EXIT_MS = 10_000;

async function main(argv: string[]): Promise<number> {
  // `restore` has arguments of its own (--from, --backup) besides the settings flags.
  if (argv[0] === 'restore' && !argv.includes('--help') && !argv.includes('-h')) {
    process.umask(0o077);
    const { restoreCommand } = await import('../plugins/archives/restore.ts');
    return restoreCommand(argv.slice(1), process.env);
  }
  // A client of a Plumb instance, with flags of its own and none of the node's settings.
  if (argv[0] === 'forward-ai-fetches') {
    const { forwardAiFetchesCommand } = await import('../lib/forwarder/cli.ts');
    return forwardAiFetchesCommand(argv.slice(1), process.env);
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    // Flags that are not Plumb's own may be plugins' settings: loadConfig and the plugins judge them.
    parsed = parseArgs(argv, { allowUnknown: true });
  } catch (err) {
    return fail(err);
  }
  if (parsed.help || parsed.command === undefined || parsed.command === 'help') {
    process.stdout.write(helpText());
    // The settings of the plugins Plumb ships, and of those -plugins names (by package or path).
    try {
      const { pluginHelpText } = await import('../lib/plugins/help.ts');
      process.stdout.write(await pluginHelpText(argv, process.env));
    } catch (err) {
      return fail(err);
    }
    return parsed.help || parsed.command === 'help' ? 0 : 2;
  }
  if (parsed.command !== 'serve') return fail(new ConfigError(parsed.command, 'unknown command (see plumb --help)'));

  // Everything the node writes (the embedded stores' files, the journal, the JWT secret, the
  // favicon cache) is for its own user alone, whatever the shell's umask says.
  process.umask(0o077);
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig({ argv });
  } catch (err) {
    return fail(err);
  }
  // Before the node's modules load: the process may be replaced here (see lib/process-settings.ts).
  applyProcessSettings(config.heapMb);
  const { startNode } = await import('../lib/node.ts');
  let node: Awaited<ReturnType<typeof startNode>>;
  try {
    node = await startNode(config);
  } catch (err) {
    return fail(err);
  }
  // The modules loaded so far go into the compile cache now, not only at a clean exit.
  flushCompileCache();
  return new Promise<number>((resolve) => {
    const shutdown = (signal: string) => {
      process.stderr.write(`plumb: ${signal} received, shutting down\n`);
      // A second signal, or a drain that overruns the budget, ends the process at once.
      process.once('SIGTERM', () => process.exit(1));
      process.once('SIGINT', () => process.exit(1));
      setTimeout(() => {
        process.stderr.write('plumb: shutdown took too long; exiting\n');
        process.exit(1);
      }, HARD_EXIT_MS).unref();
      node.stop().then(
        () => resolve(0),
        (err) => {
          process.stderr.write(`plumb: error during shutdown: ${(err as Error).stack}\n`);
          resolve(1);
        },
      );
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });
}

function fail(err: unknown): number {
  if (err instanceof ConfigError) {
    process.stderr.write(`plumb: invalid setting ${err.message}\n`);
    return 2;
  }
  process.stderr.write(`plumb: failed to start: ${(err as Error)?.stack ?? String(err)}\n`);
  return 1;
}

process.exitCode = await main(process.argv.slice(2));
// Stray handles (a slow socket) must not keep a stopped node alive.
setTimeout(() => process.exit(), 200).unref();
