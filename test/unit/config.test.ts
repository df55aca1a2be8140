import { describe, expect, it } from '@jest/globals';
import { envName } from '../../lib/brand.ts';
import { helpText, loadConfig, parseArgs, SETTINGS } from '../../lib/config.ts';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({ env: {}, cwd: '/srv/plumb' });
    expect(config.port).toBe(8080);
    expect(config.dataDir).toBe('/srv/plumb/data');
    expect(config.publicUrl).toBe('http://localhost:8080');
    expect(config.logLevel).toBe('info');
    expect(config.authSessionMinutes).toBe(15);
    expect(config.authRememberMeDays).toBe(30);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.clusterMode).toBe(false);
  });

  it('reads PLUMB_* env names and honours PORT', () => {
    expect(loadConfig({ env: { PORT: '9000' } }).port).toBe(9000);
    expect(loadConfig({ env: { PORT: '9000', PLUMB_PORT: '9100' } }).port).toBe(9100);
    const config = loadConfig({ env: { PLUMB_DATA_DIR: '/var/lib/plumb', PLUMB_PUBLIC_URL: 'https://stats.example.com/', PLUMB_LOG_LEVEL: 'debug' } });
    expect(config.dataDir).toBe('/var/lib/plumb');
    expect(config.publicUrl).toBe('https://stats.example.com');
    expect(config.logLevel).toBe('debug');
  });

  it.each([
    [['-auth-session-minutes', '30']],
    [['-auth-session-minutes=30']],
    [['--auth-session-minutes', '30']],
    [['--auth-session-minutes=30']],
  ])('accepts Go-style flag %j', (argv) => {
    expect(loadConfig({ argv: ['serve', ...argv], env: {} }).authSessionMinutes).toBe(30);
  });

  it('lets flags win over env', () => {
    expect(loadConfig({ argv: ['-port', '7000'], env: { PLUMB_PORT: '9000' } }).port).toBe(7000);
  });

  it('refuses an unknown flag by name', () => {
    expect(() => loadConfig({ argv: ['serve', '--no-such-thing=1'] })).toThrow('-no-such-thing: unknown flag');
  });

  it.each([
    [{ PLUMB_PORT: 'eighty' }, 'PLUMB_PORT: must be an integer'],
    [{ PLUMB_PORT: '70000' }, 'PLUMB_PORT: must be at most 65535'],
    [{ PLUMB_LOG_LEVEL: 'loud' }, 'PLUMB_LOG_LEVEL: must be one of'],
    [{ PLUMB_DATABASE_URL: 'mysql://x' }, 'PLUMB_DATABASE_URL: must use postgres: or postgresql:'],
    [{ PLUMB_PUBLIC_URL: 'not a url' }, 'PLUMB_PUBLIC_URL: must be an absolute URL'],
  ])('refuses invalid env %j naming the setting', (env, message) => {
    expect(() => loadConfig({ env })).toThrow(message);
  });

  it('refuses a flag without its value', () => {
    expect(() => loadConfig({ argv: ['serve', '-port'] })).toThrow('-port: needs a value');
  });

  it('never echoes a secret value in an error', () => {
    expect(() => loadConfig({ env: { PLUMB_REDIS_URL: 'http://user:hunter2@x' } })).toThrow(/hidden value/);
  });

  it('refuses cluster mode without a shared JWT secret', () => {
    const env = { PLUMB_TRANSPORTER: 'nats://127.0.0.1:4222', PLUMB_DATABASE_URL: 'postgres://db/plumb', PLUMB_CLICKHOUSE_URL: 'http://ch:8123' };
    expect(() => loadConfig({ env })).toThrow('PLUMB_JWT_SECRET: cluster mode needs one secret shared by all nodes');
    expect(loadConfig({ env: { ...env, PLUMB_JWT_SECRET: 'k'.repeat(40) } }).clusterMode).toBe(true);
  });

  it('refuses cluster mode on embedded stores and says why', () => {
    expect(() => loadConfig({ env: { PLUMB_TRANSPORTER: 'nats://127.0.0.1:4222' } })).toThrow(/embedded stores .* cannot be shared/);
    expect(() => loadConfig({ env: { PLUMB_TRANSPORTER: 'nats://127.0.0.1:4222' } })).toThrow('PLUMB_TRANSPORTER: cluster mode needs PLUMB_DATABASE_URL and PLUMB_CLICKHOUSE_URL');
  });
});

describe('parseArgs', () => {
  it('takes the first bare word as the command and --help as help', () => {
    expect(parseArgs(['serve', '--help'])).toMatchObject({ command: 'serve', help: true });
  });
});

describe('plumb --help', () => {
  it('lists every setting with its env name and default', () => {
    const text = helpText();
    for (const spec of SETTINGS) {
      expect(text).toContain(`-${spec.flag} <`);
      for (const env of spec.env) expect(text).toContain(env);
    }
    expect(text).toContain('default 8080');
    expect(text).toContain('default ./data');
  });
});

describe('env names', () => {
  it('are the brand prefix and the setting name in upper case', () => {
    expect(envName('SMTP_URL')).toBe('PLUMB_SMTP_URL');
    expect(SETTINGS.find((s) => s.flag === 'port')?.env).toEqual(['PLUMB_PORT', 'PORT']);
    for (const spec of SETTINGS) expect(spec.env[0]).toBe(`PLUMB_${spec.flag.toUpperCase().replace(/-/g, '_')}`);
  });

  it('read the same in --help as they always have', () => {
    const text = helpText();
    expect(text).toContain('  -port <int>\n      env PLUMB_PORT, PORT; default 8080\n');
    expect(text).toContain('  -webhook-allow-development-targets <bool>\n      env PLUMB_WEBHOOK_ALLOW_DEVELOPMENT_TARGETS; default false\n');
  });
});
