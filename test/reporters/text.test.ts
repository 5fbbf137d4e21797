import { describe, expect, it } from 'vitest';
import type { JobSummary } from '../../src/jobs/job.ts';
import { buildRunReport } from '../../src/reporters/json.ts';
import {
  categoryLine,
  liveRegion,
  renderTable,
  summaryLine,
  testsRan,
  textReporter,
  trialLine,
} from '../../src/reporters/text.ts';
import { jobEndEventOf, trialEndEventOf } from '../../src/trials/events.ts';
import type { TrialResult } from '../../src/trials/result.ts';

function result(
  id: string,
  status: TrialResult['berth']['status'],
  f2p: [number, number],
  p2p: [number, number],
  note: string,
  attempt = 1,
): TrialResult {
  return {
    berth: {
      instance_id: id,
      attempt,
      status,
      resolved: status === 'resolved',
      FAIL_TO_PASS: { passed: f2p[0], total: f2p[1] },
      PASS_TO_PASS: { passed: p2p[0], total: p2p[1] },
      note,
      duration_sec: 2.54,
    },
  } as TrialResult;
}

const trials = [
  result('swedl__miniconf-1', 'resolved', [9, 9], [15, 15], 'ok'),
  result('swedl__ttlcache-1', 'unresolved', [2, 5], [12, 12], 'FAIL_TO_PASS not passed: 3 failed'),
  result('swedl__cronlite-1', 'patch_failed', [0, 8], [0, 21], 'patch does not apply'),
];
const summary = {
  total: 4,
  resolved: 1,
  duration_sec: 10.31,
  cancelled: false,
  reused: 0,
  trials,
} as unknown as JobSummary;

describe('text reporter', () => {
  it('renders the seed-style table with aligned columns', () => {
    expect(renderTable(trials).split('\n')).toEqual([
      'instance           resolved      F2P      P2P      note',
      'swedl__miniconf-1  yes           9/9      15/15    ok',
      'swedl__ttlcache-1  no            2/5      12/12    FAIL_TO_PASS not passed: 3 failed',
      'swedl__cronlite-1  patch failed  not run  not run  patch does not apply',
    ]);
  });

  it('shows the outcome instead of 0/N counts when the tests did not run (empty patch, patch failed)', () => {
    const empty = result('swedl__lru-1', 'empty_patch', [0, 4], [0, 6], 'empty patch');
    expect(testsRan(empty)).toBe(false);
    expect(testsRan(trials[1] as TrialResult)).toBe(true);
    expect(trialLine(empty)).toBe(
      'swedl__lru-1  empty patch  tests not run (empty patch)  2.5s  empty patch: the agent changed nothing',
    );
    expect(trialLine(trials[2] as TrialResult)).toBe(
      'swedl__cronlite-1  patch failed  tests not run (patch failed)  2.5s  patch does not apply',
    );
    expect(renderTable([empty])).not.toMatch(/0\/4|0\/6/);
    // An error before the verifier started (no verifier timing) ran no test either.
    expect(
      testsRan({ ...result('x-1', 'error', [0, 1], [0, 1], 'EnvironmentSetupError: x'), verifier: null }),
    ).toBe(false);
    const report = buildRunReport({ ...summary, total: 2, trials: [empty, trials[1]] } as JobSummary, {
      dataset: 'd',
      agent: 'a',
    });
    expect(report.trials.map((t) => [t.status, t.tests_ran, t.FAIL_TO_PASS, t.PASS_TO_PASS])).toEqual([
      ['empty_patch', false, null, null],
      ['unresolved', true, { passed: 2, total: 5 }, { passed: 12, total: 12 }],
    ]);
  });

  it('ends with the summary line', () => {
    expect(summaryLine(summary)).toBe('resolved 1/4 (25.0%) in 10.3s');
  });

  it('after an interruption counts only the finished trials and says how many did not run', () => {
    const cancelled = result('swedl__hang-1', 'cancelled', [0, 1], [0, 1], 'cancelled');
    const stopped = {
      ...summary,
      total: 5,
      cancelled: true,
      trials: [...trials, cancelled],
    } as JobSummary;
    expect(summaryLine(stopped)).toBe(
      'resolved 1/3 (33.3% of the finished trials) in 10.3s; interrupted: 2 of 5 trials not run (1 cancelled while running, 1 never started)',
    );
    const report = buildRunReport(stopped, { dataset: 'd', agent: 'a' });
    expect(report).toMatchObject({ total: 5, finished: 3, resolved: 1, cancelled: true });
    expect(report.resolved_rate).toBeCloseTo(1 / 3);
    expect(report.counts).toMatchObject({ cancelled: 1, not_run: 1, completed: 2, patch_failed: 1 });
  });

  it('with predictions for some instances, reports SWE-bench categories over the submitted ones', () => {
    const scope = { datasetInstances: 10, submittedInstances: 4, attempts: 1, predictions: true };
    const empty = result('swedl__lru-1', 'empty_patch', [0, 4], [0, 6], 'empty patch');
    const partial = { ...summary, trials: [...trials, empty] } as JobSummary;
    expect(summaryLine(partial, scope)).toBe(
      'resolved 1/4 (25.0% of the submitted instances; 1/10 = 10.0% of the dataset) in 10.3s',
    );
    expect(categoryLine(partial, scope)).toBe(
      'instances: 10 in the dataset, 4 submitted, 6 without a prediction (not run); 2 completed (1 resolved, 1 unresolved), 1 empty patch, 1 error (1 patch failed)',
    );
    const report = buildRunReport(partial, { dataset: 'd', agent: 'a', scope });
    expect(report.instances).toEqual({ dataset: 10, submitted: 4, without_prediction: 6 });
  });

  it('writes one line per trial in lines mode and the table only at the end in tty mode', () => {
    let lines = '';
    const ci = textReporter({ mode: 'lines', attempts: 2, write: (t) => (lines += t) });
    const r = result('a__b-1', 'resolved', [1, 1], [2, 2], 'ok', 2);
    ci.onTrialEnd?.(r, trialEndEventOf(r, 'job'));
    expect(lines).toBe('a__b-1 #2  yes  F2P 1/1  P2P 2/2  2.5s  ok\n');
    let tty = '';
    const drawn: string[] = [];
    let clock = 0;
    const term = textReporter({
      mode: 'tty',
      attempts: 1,
      write: (t) => (tty += t),
      total: 4,
      live: { render: (t) => drawn.push(t), clear: () => drawn.push('<clear>') },
      now: () => clock,
      tickSec: 0,
    });
    // Nothing is drawn before the first trial starts (berth's own lines above stay).
    expect(drawn).toEqual([]);
    term.onTrialStart?.({} as never);
    expect(drawn.at(-1)).toBe('0/4 finished, 0 resolved, 1 running | 0s elapsed, estimating time left');
    term.onTrialStart?.({} as never);
    clock = 30_000;
    term.onTrialEnd?.(trials[0] as TrialResult, trialEndEventOf(trials[0] as TrialResult, 'job'));
    expect(tty).toBe('');
    expect(drawn.at(-1)).toBe('1/4 finished, 1 resolved, 1 running | 30s elapsed, about 1m30s left');
    clock = 65_000;
    term.onTrialEnd?.(trials[1] as TrialResult, trialEndEventOf(trials[1] as TrialResult, 'job'));
    expect(drawn.at(-1)).toBe('2/4 finished, 1 resolved, 1 failed | 1m05s elapsed, about 1m05s left');
    term.onJobEnd?.({ summary, swebench: null }, jobEndEventOf(summary));
    expect(drawn.at(-1)).toBe('<clear>');
    expect(tty).toBe(`${renderTable(trials)}\nresolved 1/4 (25.0%) in 10.3s\n`);
    expect(trialLine(trials[2] as TrialResult)).toContain('patch failed  tests not run');
  });

  it('draws no live line on a terminal that reports no width (a pseudo-terminal of size 0)', () => {
    expect(liveRegion({ columns: 0 } as NodeJS.WriteStream)).toBeUndefined();
    let written = '';
    const stream = {
      columns: 80,
      rows: 24,
      write: (t: string) => (written += t),
      isTTY: true,
    } as unknown as NodeJS.WriteStream;
    liveRegion(stream)?.render('1/4 finished');
    expect(written).toContain('1/4 finished');
  });
});
