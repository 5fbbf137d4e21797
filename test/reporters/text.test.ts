import { describe, expect, it } from 'vitest';
import type { JobSummary } from '../../src/jobs/job.ts';
import { renderTable, summaryLine, textReporter, trialLine } from '../../src/reporters/text.ts';
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
      'instance           resolved      F2P  P2P    note',
      'swedl__miniconf-1  yes           9/9  15/15  ok',
      'swedl__ttlcache-1  no            2/5  12/12  FAIL_TO_PASS not passed: 3 failed',
      'swedl__cronlite-1  patch failed  0/8  0/21   patch does not apply',
    ]);
  });

  it('ends with the summary line', () => {
    expect(summaryLine(summary)).toBe('resolved 1/4 (25.0%) in 10.3s');
    expect(summaryLine({ ...summary, cancelled: true } as JobSummary)).toBe(
      'resolved 1/4 (25.0%) in 10.3s (stopped: 3 of 4 trials finished)',
    );
  });

  it('writes one line per trial in lines mode and the table only at the end in tty mode', () => {
    let lines = '';
    const ci = textReporter({ mode: 'lines', attempts: 2, write: (t) => (lines += t) });
    ci.trialEnded(result('a__b-1', 'resolved', [1, 1], [2, 2], 'ok', 2), false);
    expect(lines).toBe('a__b-1 #2  yes  F2P 1/1  P2P 2/2  2.5s  ok\n');
    let tty = '';
    let progress = '';
    const term = textReporter({
      mode: 'tty',
      attempts: 1,
      write: (t) => (tty += t),
      total: 4,
      progress: (t) => (progress += t),
    });
    term.trialEnded(trials[0] as TrialResult, false);
    expect(tty).toBe('');
    expect(progress).toBe('\r\u001b[K1/4 finished, 1 resolved (last: swedl__miniconf-1 yes)');
    term.jobEnded(summary);
    expect(tty).toBe(`${renderTable(trials)}\nresolved 1/4 (25.0%) in 10.3s\n`);
    expect(trialLine(trials[2] as TrialResult)).toContain('patch failed  F2P 0/8');
  });
});
