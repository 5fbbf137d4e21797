import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJob } from '../../src/results/read-job.ts';
import { startViewer, type Viewer } from '../../src/view/server.ts';
import { browserSkipReason, launchBrowser, screenshot, watchedPage } from '../helpers/browser.ts';
import { berthAsync, runSample, sample } from '../helpers/jobs.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
let browser: Browser | undefined;
let viewer: Viewer;
let jobs = '';

beforeAll(async () => {
  jobs = await temp.make('berth-viewer-');
  runSample(jobs, 'oracle', ['-a', 'oracle', '-n', '2']);
  runSample(jobs, 'nop', ['-a', 'nop']);
  viewer = await startViewer({ jobsDir: jobs, port: 0, pollMs: 250 });
  if (!browserSkipReason) browser = await launchBrowser();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await viewer?.close();
  await temp.cleanup();
});

describe('berth view (a live server on 127.0.0.1)', () => {
  it('lists the jobs, and shows a third one live while it runs, trial by trial, until it ends', async (ctx) => {
    if (browserSkipReason) ctx.skip(browserSkipReason);
    const { page, problems } = await watchedPage(browser as Browser, viewer.url.replace(/\/$/, ''));
    await page.goto(viewer.url);
    await page.waitForSelector('body[data-ready]');
    expect(
      await page.locator('tr[data-job]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-job'))),
    ).toEqual(['oracle', 'nop']);
    // A third job starts: an agent that sleeps 3 s per task and changes nothing.
    const live = berthAsync([
      'run',
      '-p',
      sample,
      '-a',
      'command',
      '--agent-command',
      'sleep 3',
      '--jobs-dir',
      jobs,
      '--job-name',
      'live',
    ]);
    const ended = new Promise<number | null>((done) => live.on('exit', (code) => done(code)));
    try {
      // The list updates by itself (server-sent events), and says the job runs.
      await page.waitForSelector('tr[data-job="live"] .badge.running', { timeout: 60_000 });
      await screenshot(page, 'viewer-jobs-live');
      const jobPage = await browser?.newPage({ viewport: { width: 1400, height: 1000 } });
      if (!jobPage) throw new Error('no page');
      jobPage.on('pageerror', (error) => problems.errors.push(error.message));
      await jobPage.goto(`${viewer.url}jobs/live/`);
      await jobPage.waitForSelector('[data-live]');
      const finished = () => jobPage.locator('tr.trial-row[data-outcome="failed"]').count();
      const seen = new Set<number>();
      seen.add(await finished());
      // Without a reload, the page shows more and more finished trials.
      while (!seen.has(4)) {
        await jobPage.waitForFunction(
          (known) => !known.includes(document.querySelectorAll('tr.trial-row[data-outcome="failed"]').length),
          [...seen],
          { timeout: 60_000 },
        );
        seen.add(await finished());
        if (seen.size === 2) await screenshot(jobPage, 'viewer-job-running');
      }
      expect(seen.size).toBeGreaterThanOrEqual(3);
      expect(await ended).toBe(0);
      await jobPage.waitForFunction(() => document.querySelector('[data-live]') === null, undefined, {
        timeout: 30_000,
      });
      expect(await jobPage.locator('tr.trial-row').count()).toBe(4);
      await screenshot(jobPage, 'viewer-job-finished');
      await page.waitForFunction(
        () => !document.querySelector('tr[data-job="live"] .badge.running'),
        undefined,
        {
          timeout: 30_000,
        },
      );
      await jobPage.close();
    } finally {
      live.kill();
    }
    expect(problems).toEqual({ console: [], errors: [], requests: [] });
    await page.close();
  }, 240_000);

  it('a trial page from the server: its why, and links to the whole files', async (ctx) => {
    if (browserSkipReason) ctx.skip(browserSkipReason);
    const { page, problems } = await watchedPage(browser as Browser, viewer.url.replace(/\/$/, ''));
    const trial = (await readJob(join(jobs, 'oracle'))).trials[0]?.name as string;
    await page.goto(`${viewer.url}jobs/oracle/#/trial/${trial}`);
    await page.waitForSelector(`[data-trial-page="${trial}"]`);
    expect(await page.locator('[data-why]').textContent()).toMatch(/^ok|F2P/);
    const href = (await page.locator('[data-section="patch"] a').first().getAttribute('href')) as string;
    expect(href).toBe(`/files/oracle/${trial}/agent/patch.diff`);
    const file = await page.request.get(`${viewer.url.replace(/\/$/, '')}${href}`);
    expect(file.headers()['content-type']).toBe('text/plain; charset=utf-8');
    expect(await file.text()).toContain('diff --git');
    expect(problems).toEqual({ console: [], errors: [], requests: [] });
    await page.close();
  });

  it('compare shows the tasks that flipped', async (ctx) => {
    if (browserSkipReason) ctx.skip(browserSkipReason);
    const { page, problems } = await watchedPage(browser as Browser, viewer.url.replace(/\/$/, ''));
    await page.goto(`${viewer.url}compare?jobs=oracle,nop`);
    await page.waitForSelector('[data-compare]');
    expect(await page.locator('[data-flips="lost"] li').allTextContents()).toEqual([
      'berth__csvline-1',
      'berth__durations-1',
      'berth__intervals-1',
      'berth__toposort-1',
    ]);
    expect(await page.locator('[data-flips="gained"]').count()).toBe(0);
    await screenshot(page, 'viewer-compare');
    await page.goto(`${viewer.url}leaderboard`);
    await page.waitForSelector('[data-leaderboard] tr[data-row]');
    // The oracle names no model (Harbor's AgentInfo.model_info is null for it).
    expect(await page.locator('tr[data-row]').first().getAttribute('data-row')).toBe('oracle|');
    expect(problems).toEqual({ console: [], errors: [], requests: [] });
    await page.close();
  });
});

/** The status of a GET with a Host header of our choosing (fetch will not set Host). */
function statusWithHost(port: number, path: string, host: string): Promise<number | undefined> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      res.resume();
      done(res.statusCode);
    });
    req.on('error', fail);
    req.end();
  });
}

describe('the viewer refuses what a hostile page or job could ask for', () => {
  it('other hosts, paths out of the jobs folder, links, methods; serves files as inert text', async () => {
    const origin = viewer.url.replace(/\/$/, '');
    const get = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${origin}${path}`, { headers });
    // DNS rebinding: a page of another site that resolves to 127.0.0.1 sends its own Host.
    expect(await statusWithHost(viewer.port, '/api/jobs', 'attacker.example')).toBe(421);
    expect(await statusWithHost(viewer.port, '/api/jobs', `127.0.0.1:${viewer.port}`)).toBe(200);
    expect((await get('/api/jobs')).status).toBe(200);
    expect((await fetch(`${origin}/api/jobs`, { method: 'POST' })).status).toBe(405);
    expect((await get('/files/oracle/%2e%2e/%2e%2e/etc/passwd')).status).toBe(404);
    expect((await get('/files/%2e%2e/oracle/config.json')).status).toBe(404);
    expect((await get('/api/jobs/%2e%2e')).status).toBe(404);
    const trial = (await readJob(join(jobs, 'nop'))).trials[0]?.name as string;
    const secret = join(jobs, '..', `berth-viewer-secret-${process.pid}.txt`);
    writeFileSync(secret, 'BERTH-VIEWER-SECRET');
    mkdirSync(join(jobs, 'nop', trial, 'agent'), { recursive: true });
    symlinkSync(secret, join(jobs, 'nop', trial, 'agent', 'leak.txt'));
    const leak = await get(`/files/nop/${trial}/agent/leak.txt`);
    expect(leak.status).toBe(404);
    expect(await leak.text()).not.toContain('BERTH-VIEWER-SECRET');
    writeFileSync(join(jobs, 'nop', trial, 'agent', 'page.html'), '<script>alert(1)</script>');
    const html = await get(`/files/nop/${trial}/agent/page.html`);
    expect(html.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(html.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(html.headers.get('x-content-type-options')).toBe('nosniff');
    const details = await (await get(`/api/jobs/nop/trials/${trial}`)).json();
    expect(JSON.stringify(details)).not.toContain('BERTH-VIEWER-SECRET');
  });
});
