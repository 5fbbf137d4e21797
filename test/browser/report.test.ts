import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJob } from '../../src/results/read-job.ts';
import { browserSkipReason, launchBrowser, screenshot, watchedPage } from '../helpers/browser.ts';
import { runDeckhandJob } from '../helpers/deckhand-job.ts';
import { addTrajectory, berth, runMultilingualControls, runPartial } from '../helpers/jobs.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
let browser: Browser | undefined;
let partial = '';
let controls = '';
let trajectoryTrial = '';
let deckhand = '';

beforeAll(async () => {
  const jobs = await temp.make('berth-report-browser-');
  partial = runPartial(jobs, 'partial');
  // The trial an agent that calls models would leave: its trajectory beside its patch.
  trajectoryTrial = (await readJob(partial)).trials[0]?.name as string;
  addTrajectory(join(partial, trajectoryTrial));
  controls = runMultilingualControls(jobs, 'controls');
  // berth's own agent against the scripted model server: real trajectories, tokens and costs.
  deckhand = await runDeckhandJob(jobs, 'deckhand');
  for (const job of [partial, controls]) {
    const written = berth(['report', '--html', job]);
    if (written.code !== 0) throw new Error(written.stderr);
  }
  if (!browserSkipReason) browser = await launchBrowser();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await temp.cleanup();
});

const url = (job: string, hash = '') => `${pathToFileURL(join(job, 'report.html')).href}${hash}`;

describe('the HTML report in Chromium (file://, no network)', () => {
  it('berth run wrote report.html; it opens with no console error and asks for nothing', async (ctx) => {
    if (browserSkipReason) ctx.skip(browserSkipReason);
    expect(existsSync(join(partial, 'report.html'))).toBe(true);
    const { page, problems } = await watchedPage(browser as Browser);
    await page.goto(url(partial));
    await page.waitForSelector('body[data-ready]');
    await page.waitForSelector('[data-chart="phases"][data-rendered="true"]');
    await screenshot(page, 'report-partial');
    expect(problems).toEqual({ console: [], errors: [], requests: [] });
    expect(await page.locator('[data-card="rate"] .big').textContent()).toBe('0.0%');
    expect(await page.locator('tr.trial-row').count()).toBe(4);
    // Phases ran: environment, agent set-up (recorded always, as Harbor does: an instant for an agent
    // without one), agent, verifier -> four boxes (the first rect mark; the second is the medians).
    const boxes = page.locator('[data-chart="phases"] g.mark-rect.role-mark').first().locator('path');
    expect(await boxes.count()).toBe(4);
    expect(await page.locator('[data-chart="phases"]').getAttribute('data-marks')).toBe('4');
    await page.close();
  });

  it('charts of the multilingual job draw one bar per task type, language and repository', async (ctx) => {
    if (browserSkipReason) ctx.skip(browserSkipReason);
    const { page, problems } = await watchedPage(browser as Browser);
    await page.goto(url(controls));
    await page.waitForSelector('body[data-ready]');
    for (const chart of ['by-repository', 'by-language', 'by-task-type'])
      await page.waitForSelector(`[data-chart="${chart}"][data-rendered="true"]`);
    await screenshot(page, 'report-multilingual');
    expect(problems).toEqual({ console: [], errors: [], requests: [] });
    const bars = async (chart: string) => {
      const count = await page.locator(`[data-chart="${chart}"] g.mark-rect.role-mark path`).count();
      // The page says how many marks it meant to draw; the browser drew as many.
      expect(await page.locator(`[data-chart="${chart}"]`).getAttribute('data-marks')).toBe(String(count));
      return count;
    };
    expect(await bars('by-task-type')).toBe(4);
    expect(await bars('by-language')).toBe(3);
    expect(await bars('by-repository')).toBe(6);
    // The interval of each group is drawn as a rule.
    expect(await page.locator('[data-chart="by-language"] g.mark-rule.role-mark line').count()).toBe(3);

    // Filters: failed only, then Go only.
    await page.locator('[data-filter-outcome="resolved"]').uncheck();
    expect(await page.locator('tr.trial-row').count()).toBe(4);
    expect(await page.locator('[data-count]').getAttribute('data-count')).toBe('4');
    await page.locator('[data-filter-outcome="resolved"]').check();
    await page.locator('select[data-filter="language"]').selectOption('go');
    expect(await page.locator('tr.trial-row').count()).toBe(2);
    await page.close();
  });

  it('one click from a failed row to its page: why, tests, a coloured diff, the trajectory, searchable logs', async (ctx) => {
    if (browserSkipReason) ctx.skip(browserSkipReason);
    const { page, problems } = await watchedPage(browser as Browser);
    await page.goto(url(partial));
    await page.waitForSelector('body[data-ready]');
    await page.locator(`tr.trial-row[data-trial="${trajectoryTrial}"]`).click();
    await page.waitForSelector(`[data-trial-page="${trajectoryTrial}"]`);
    const why = await page.locator('[data-why]').textContent();
    expect(why).toMatch(/^failing: /);
    expect(await page.locator('[data-tests] tr.failing').count()).toBeGreaterThan(0);
    expect(await page.locator('[data-diff] span.add').count()).toBeGreaterThan(0);
    expect(await page.locator('[data-diff] span.del').count()).toBeGreaterThan(0);
    expect(await page.locator('[data-trajectory] .step').count()).toBe(5);
    expect(
      await page
        .locator('[data-tool-call]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-tool-call'))),
    ).toEqual(['bash', 'edit_file']);
    // The observation held `</script><script>...`: it is shown as text and ran nothing.
    expect(await page.locator('[data-section="trajectory"]').textContent()).toContain(
      '</script><script>window.__berthInjected',
    );
    expect(
      await page.evaluate(() => (window as unknown as { __berthInjected?: boolean }).__berthInjected),
    ).toBeUndefined();
    expect(await page.locator('[data-section="instruction"] pre').textContent()).toContain('RFC 4180');
    await screenshot(page, 'report-trial');
    // Keys: j to the next trial, k back, Escape to the list.
    await page.keyboard.press('j');
    await page.waitForSelector(`[data-trial-page]:not([data-trial-page="${trajectoryTrial}"])`);
    await page.keyboard.press('k');
    await page.waitForSelector(`[data-trial-page="${trajectoryTrial}"]`);
    // Search the logs.
    await page.locator('[data-log-search]').fill('not ok');
    const summaries = await page.locator('[data-log] summary').allTextContents();
    expect(summaries.some((s) => /[1-9]\d* matching line/.test(s))).toBe(true);
    expect(problems).toEqual({ console: [], errors: [], requests: [] });
    // The link to a whole log is relative to the report and opens the file.
    const href = await page.locator('[data-log] a').first().getAttribute('href');
    expect(href?.startsWith(`${trajectoryTrial}/`)).toBe(true);
    expect(existsSync(join(partial, decodeURIComponent(href as string)))).toBe(true);
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.keyboard.press('Escape');
    await page.waitForSelector('tr.trial-row');
    await page.close();
  });

  it("a job of berth's own agent: tokens and cost, a point per trial, each trial's trajectory step by step", async (ctx) => {
    if (browserSkipReason) ctx.skip(browserSkipReason);
    const { page, problems } = await watchedPage(browser as Browser);
    await page.goto(url(deckhand));
    await page.waitForSelector('[data-chart="cost"][data-rendered="true"]');
    const job = await readJob(deckhand);
    const cost = job.trials.reduce((sum, t) => sum + (t.cost_usd ?? 0), 0);
    expect(job.trials.every((t) => t.cost_usd !== null && t.input_tokens !== null)).toBe(true);
    expect(await page.locator('[data-card="tokens"] .big').textContent()).toBe(`$${cost.toFixed(4)}`);
    expect(await page.locator('[data-chart="cost"] g.mark-symbol.role-mark path').count()).toBe(4);
    const failed = job.trials.find((t) => t.outcome === 'failed') as { name: string };
    await page.locator(`tr.trial-row[data-trial="${failed.name}"]`).click();
    await page.waitForSelector(`[data-trial-page="${failed.name}"]`);
    const trajectory = JSON.parse(
      readFileSync(join(deckhand, failed.name, 'agent', 'trajectory.json'), 'utf8'),
    );
    expect(await page.locator('[data-trajectory] .step').count()).toBe(trajectory.steps.length);
    const calls = trajectory.steps.flatMap((s: { tool_calls?: Array<{ function_name: string }> }) =>
      (s.tool_calls ?? []).map((c) => c.function_name),
    );
    expect(calls).toEqual(['bash', 'bash', 'finish']);
    expect(
      await page
        .locator('[data-tool-call]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-tool-call'))),
    ).toEqual(calls);
    expect(await page.locator('[data-why]').textContent()).toMatch(/^failing: /);
    await screenshot(page, 'report-deckhand-trial');
    expect(problems).toEqual({ console: [], errors: [], requests: [] });
    await page.close();
  });

  it('the report holds no reference to anything outside the page', () => {
    const html = readFileSync(join(partial, 'report.html'), 'utf8');
    expect(html).toContain("connect-src 'none'");
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|sourceMappingURL/);
  });
});
