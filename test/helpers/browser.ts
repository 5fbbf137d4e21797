/**
 * Headless Chromium (Debian's `chromium`, driven by playwright-core) for the report and viewer
 * tests. Without a browser the tests skip with a reason, unless BERTH_REQUIRE_BROWSER=1 (set by
 * .ci/run), where they fail. Screenshots go to `test-output/browser/` (look at them).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';

export const CHROMIUM = process.env.BERTH_CHROMIUM ?? '/usr/bin/chromium';
export const requireBrowser = process.env.BERTH_REQUIRE_BROWSER === '1';
export const hasBrowser = existsSync(CHROMIUM);
/** Why browser tests skip here, or undefined when they run. */
export const browserSkipReason =
  hasBrowser || requireBrowser
    ? undefined
    : `no Chromium at ${CHROMIUM} (apt-get install chromium; CI sets BERTH_REQUIRE_BROWSER=1)`;

export const screenshots = fileURLToPath(new URL('../../test-output/browser/', import.meta.url));

/** Launches Chromium as the machine allows it (root, no GPU, no background connections). */
export async function launchBrowser(): Promise<Browser> {
  if (!hasBrowser) throw new Error(`BERTH_REQUIRE_BROWSER=1 but there is no Chromium at ${CHROMIUM}`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** What a page did that a clean page must not: console errors and warnings, page errors, requests off the page. */
export interface PageProblems {
  console: string[];
  errors: string[];
  /** Requests to anything but file:, data:, blob: or the given origin. */
  requests: string[];
}

/** A new page that records its problems. */
export async function watchedPage(
  browser: Browser,
  allowedOrigin?: string,
): Promise<{ page: Page; problems: PageProblems }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const problems: PageProblems = { console: [], errors: [], requests: [] };
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning')
      problems.console.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.errors.push(error.message));
  page.on('request', (request) => {
    const url = request.url();
    if (/^(file|data|blob):/.test(url)) return;
    if (allowedOrigin && url.startsWith(allowedOrigin)) return;
    problems.requests.push(url);
  });
  return { page, problems };
}

/** Saves a full-page screenshot under test-output/browser/ and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(screenshots, { recursive: true });
  const path = join(screenshots, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
