// The local services the test suites talk to, in one place: the external and cluster suites
// connect to these URLs, and the preflight checks them before anything else runs.

/** The one name of the test PostgreSQL's URL (the product's own is PLUMB_DATABASE_URL). */
export const POSTGRES_URL_ENV = 'PLUMB_TEST_DATABASE_URL';
export const POSTGRES_URL = process.env[POSTGRES_URL_ENV] ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.PLUMB_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const NATS_URL = process.env.PLUMB_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
export const CHROMIUM_PATH_ENV = 'PLUMB_CHROMIUM';
export const CHROMIUM_PATH = process.env[CHROMIUM_PATH_ENV] ?? '/usr/bin/chromium';

export interface LocalService {
  name: string;
  /** The env var that points the tests elsewhere. */
  env: string;
  url: string;
  defaultPort: number;
  /** How to start it on a Debian machine like CI's. */
  start: string;
}

export const LOCAL_SERVICES: readonly LocalService[] = [
  {
    name: 'PostgreSQL',
    env: POSTGRES_URL_ENV,
    url: POSTGRES_URL,
    defaultPort: 5432,
    start: 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start',
  },
  {
    name: 'Redis',
    env: 'PLUMB_TEST_REDIS_URL',
    url: REDIS_URL,
    defaultPort: 6379,
    start: 'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no',
  },
  {
    name: 'NATS (JetStream)',
    env: 'PLUMB_TEST_NATS_URL',
    url: NATS_URL,
    defaultPort: 4222,
    start: 'nats-server -a 127.0.0.1 -p 4222 -js &',
  },
];
