// The product's brand, spelled once. Header names, env prefixes and the webhook User-Agent derive from it.
import { readFileSync } from 'node:fs';

export const BRAND = 'Plumb';
export const BRAND_ENV_PREFIX = `${BRAND.toUpperCase() as Uppercase<typeof BRAND>}_` as const;
/** The environment variable of a setting: `envName('DATA_DIR')` is `PLUMB_DATA_DIR`. */
export const envName = <const Name extends string>(name: Name) => `${BRAND_ENV_PREFIX}${name}` as const;
export const BRAND_HEADER_PREFIX = 'X-Plumb-';
/** The version of the webhook payload contract, sent in every envelope and the User-Agent. */
export const WEBHOOK_API_VERSION = '2.11';
export const WEBHOOK_USER_AGENT = `${BRAND}-Webhook/${WEBHOOK_API_VERSION}`;

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
export const VERSION: string = packageJson.version;
