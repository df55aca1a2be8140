// Browser tests drive Debian's Chromium through playwright-core (no downloaded browser builds).
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { CHROMIUM_PATH } from './services.ts';

export const CHROMIUM = CHROMIUM_PATH;

/** A headless Chromium with the background chatter (updates, sync, QUIC probes) switched off. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (apt-get install chromium, or set PLUMB_CHROMIUM)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
  });
}
