// Helpers for dashboard browser tests: signing in, a log of every request the dashboard makes, an
// axe-core accessibility scan, and screenshots in light and dark mode for review.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { ROOT } from './instance.ts';
import { describeProblems, layoutProblems } from './layout-check.ts';

export const SCREENSHOTS = join(ROOT, 'test-output', 'screenshots');

/**
 * Env of an instance one browser drives: a whole office's worth of requests from one address, so
 * the per-IP limits (not under test here) stay out of the way, and hits are stored within 50 ms.
 */
export const BROWSER_DRIVEN_ENV: Readonly<Record<string, string>> = {
  PLUMB_INGEST_FLUSH_MS: '50',
  PLUMB_INGEST_RATE_PER_SECOND: '1000',
  PLUMB_INGEST_BURST: '1000',
  PLUMB_API_RATE_PER_SECOND: '1000',
  PLUMB_API_BURST: '1000',
};

/** Someone who signs in with a password alone (no second factor). */
export interface PasswordAccount {
  email: string;
  password: string;
}

/**
 * Signs `who` in on the login page of the instance at `url`, as a person does, and waits for the
 * sites list a signed-in user lands on. Answers the page, signed in.
 */
export async function signInAs(page: Page, who: PasswordAccount, url: string): Promise<Page> {
  await page.goto(`${url}/login`);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Sites', level: 1 }).waitFor({ timeout: 15_000 });
  return page;
}

/** Records the URL of every request any page of the context makes (documents, assets, API calls). */
export function logRequests(context: BrowserContext, log: string[]) {
  context.on('request', (request) => log.push(request.url()));
}

/** Requests that did not go to `origin` (data: and blob: URLs never leave the browser). */
export const foreignRequests = (log: readonly string[], origin: string) => log.filter((url) => !url.startsWith(`${origin}/`) && !/^(data|blob):/.test(url));

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeFinding {
  page: string;
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/** Runs axe-core (WCAG 2 A/AA rules) on the page; answers the serious and critical findings. */
export async function seriousViolations(page: Page, name: string): Promise<AxeFinding[]> {
  // Evaluated by the browser's devtools protocol: an inline <script> tag would be refused by the
  // dashboard's Content Security Policy.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => ({ page: name, ...v }));
}

/**
 * Screenshots of the page in light and dark mode (as the system preference, which the dashboard
 * follows), with the axe scan in both: contrast problems often show up in one scheme only.
 */
export async function reviewPage(page: Page, name: string, findings: AxeFinding[]) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
    await page.waitForTimeout(150);
    findings.push(...(await seriousViolations(page, `${name} (${scheme})`)));
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-${scheme}.png`), fullPage: true });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** The widths every page is judged at: a laptop and a small phone. */
export const REVIEW_VIEWPORTS = [
  { width: 1366, height: 900 },
  { width: 360, height: 780 },
] as const;

/**
 * The page as it is, in light and dark mode at both widths: its serious axe findings and layout
 * problems (one message each), with a screenshot of each state (`<name>-<scheme>-<width>.png`).
 * `prepare` runs after each change of width (e.g. opening again a menu the resize closed). The
 * page is left at the first width, in light mode.
 */
export async function reviewLayouts(on: Page, name: string, prepare: () => Promise<void> = async () => {}): Promise<string[]> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const messages: string[] = [];
  for (const viewport of REVIEW_VIEWPORTS) {
    await on.setViewportSize(viewport);
    await prepare();
    for (const scheme of ['light', 'dark'] as const) {
      await on.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
      await on.evaluate(() => document.fonts.ready.then(() => undefined));
      await on.waitForTimeout(150);
      const where = `${name} · ${scheme} · ${viewport.width}px`;
      for (const finding of await seriousViolations(on, where)) messages.push(`${where}: axe ${finding.id}: ${finding.help} (${finding.targets.join(', ')})`);
      messages.push(...describeProblems(where, await layoutProblems(on)));
      await on.screenshot({ path: join(SCREENSHOTS, `${name}-${scheme}-${viewport.width}.png`), fullPage: true });
    }
  }
  await on.setViewportSize(REVIEW_VIEWPORTS[0]);
  await on.emulateMedia({ colorScheme: 'light' });
  return messages;
}
