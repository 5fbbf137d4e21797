/**
 * Speed of the HTML report on a 1,000-trial job (issue 15: "the report of a 1,000-trial job is
 * written in under 3 s and opens in Chromium in under 2 s"). A synthetic job folder in berth's
 * layout is made once: 1,000 trials over 250 tasks (4 attempts), 20 repositories, 5 languages,
 * 6 task types, each with a result.json carrying 20 test verdicts, a 3 KB patch, a 40 KB test
 * log, the instruction, and (one trial in four) a 30-step ATIF trajectory with tokens and cost.
 *
 * In one run, interleaved over rounds (the median is reported):
 * - write: `writeJobReport` (read every trial, summarise, chart, write report.html), against a
 *   baseline that reads the same files and writes their bytes as one file (the I/O floor);
 * - open: Chromium loads report.html from file:// until the page script is done and every
 *   chart is drawn, against a baseline page with the same inlined libraries and no data.
 *
 *   npx tsx bench/report-html.ts [--rounds 3] [--trials 1000] [--keep]
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { renderPage } from '../src/reporters/html/page.ts';
import { writeJobReport } from '../src/reporters/html/report.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const index = args.indexOf(name);
  return index >= 0 && args[index + 1] ? (args[index + 1] as string) : fallback;
};
const rounds = Number(option('--rounds', '3'));
const trialCount = Number(option('--trials', '1000'));
const chromiumPath = process.env.BERTH_CHROMIUM ?? '/usr/bin/chromium';

const LANGUAGES = ['python', 'javascript', 'go', 'java', 'rust'];
const TYPES = ['BF', 'FE', 'FI', 'RF', 'TG', 'CD'];

/** A deterministic pseudo-random number in [0, 1) from an integer. */
const noise = (n: number) => {
  const x = Math.sin(n * 12.9898) * 43758.5453;
  return x - Math.floor(x);
};

function patchText(i: number): string {
  const lines = [
    'diff --git a/src/module.py b/src/module.py',
    'index 1111111..2222222 100644',
    '--- a/src/module.py',
    '+++ b/src/module.py',
    '@@ -10,20 +10,24 @@',
  ];
  for (let l = 0; l < 60; l++)
    lines.push(
      `${l % 7 === 0 ? '-' : l % 5 === 0 ? '+' : ' '}    value_${i}_${l} = compute(value_${l}, options)  # line ${l}`,
    );
  return `${lines.join('\n')}\n`;
}

function logText(i: number): string {
  const lines: string[] = [];
  for (let l = 0; l < 500; l++)
    lines.push(
      `tests/test_module.py::test_case_${l % 20} ${l % 13 === 0 ? 'FAILED' : 'PASSED'} [${(l / 5).toFixed(0)}%] trial ${i}`,
    );
  return `${lines.join('\n')}\n`;
}

function trajectory(i: number): unknown {
  const steps: unknown[] = [
    { step_id: 1, source: 'system', message: 'You are a coding agent.' },
    { step_id: 2, source: 'user', message: `Fix issue ${i}.` },
  ];
  for (let s = 3; s <= 30; s++)
    steps.push({
      step_id: s,
      source: 'agent',
      model_name: 'bench/model',
      message: `Step ${s}: looking at the code.`,
      tool_calls: [
        {
          tool_call_id: `c${s}`,
          function_name: 'bash',
          arguments: { command: `grep -n value_${s} src/module.py` },
        },
      ],
      observation: {
        results: [
          { source_call_id: `c${s}`, content: `src/module.py:${s}: value_${s} = compute()\n`.repeat(8) },
        ],
      },
      metrics: { prompt_tokens: 1000 + 50 * s, completion_tokens: 60, cached_tokens: 800, cost_usd: 0.002 },
    });
  return { schema_version: 'ATIF-v1.7', agent: { name: 'bench', version: '1' }, steps };
}

/** Writes the synthetic job folder. */
async function makeJob(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const names: string[] = [];
  for (let i = 0; i < trialCount; i++) {
    const taskIndex = Math.floor(i / 4);
    const attempt = (i % 4) + 1;
    const repo = `org${taskIndex % 20}/repo${taskIndex % 20}`;
    const task = `org${taskIndex % 20}__repo${taskIndex % 20}-${taskIndex}`;
    const name = `${task}__${attempt}`;
    names.push(name);
    const r = noise(i);
    const status = r < 0.45 ? 'resolved' : r < 0.85 ? 'unresolved' : r < 0.95 ? 'error' : 'empty_patch';
    const tests = Array.from({ length: 20 }, (_, t) => ({
      id: `tests/test_module.py::test_case_${t}`,
      category: t < 5 ? 'FAIL_TO_PASS' : 'PASS_TO_PASS',
      passed: status === 'resolved' || (t >= 5 && t % 7 !== 0) || (t < 5 && t % 2 === 0),
      status: 'PASSED',
      matched_by: 'exact',
    }));
    const start = Date.parse('2026-12-01T10:00:00Z') + i * 1000;
    const at = (s: number) => new Date(start + s * 1000).toISOString();
    const withTokens = i % 4 === 0;
    const result = {
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      task_name: task,
      trial_name: name,
      trial_uri: pathToFileURL(join(dir, name)).href,
      source: 'bench',
      task_checksum: 'x',
      agent_info: { name: 'bench-agent', version: '1', model_info: { name: 'bench/model' } },
      agent_result: withTokens
        ? {
            n_input_tokens: 40000 + 100 * (i % 50),
            n_cache_tokens: 20000,
            n_output_tokens: 2000 + 10 * (i % 30),
            cost_usd: 0.05 + 0.001 * (i % 40),
          }
        : null,
      verifier_result: status === 'error' ? null : { rewards: { reward: status === 'resolved' ? 1 : 0 } },
      exception_info:
        status === 'error'
          ? {
              exception_type: i % 2 ? 'AgentTimeoutError' : 'VerifierTimeoutError',
              exception_message: 'timed out after 600 s',
              exception_traceback: 'Traceback...',
              occurred_at: at(8),
            }
          : null,
      started_at: at(0),
      finished_at: at(12),
      environment_setup: { started_at: at(0), finished_at: at(1 + noise(i + 1)) },
      agent_setup: null,
      agent_execution: { started_at: at(2), finished_at: at(2 + 6 * noise(i + 2)) },
      verifier: { started_at: at(9), finished_at: at(9 + 2 * noise(i + 3)) },
      berth: {
        version: 'bench',
        instance_id: task,
        attempt,
        status,
        resolved: status === 'resolved',
        patch_sha256: null,
        files: { patch: 'agent/patch.diff', test_output: 'verifier/test-output.txt' },
        FAIL_TO_PASS: { passed: tests.slice(0, 5).filter((t) => t.passed).length, total: 5 },
        PASS_TO_PASS: { passed: tests.slice(5).filter((t) => t.passed).length, total: 15 },
        note: status === 'unresolved' ? 'FAIL_TO_PASS not passed' : 'ok',
        verifier_details: { tests },
        duration_sec: 12,
        categories: { repository: repo, language: LANGUAGES[taskIndex % 5], task_type: TYPES[taskIndex % 6] },
      },
    };
    const trialDir = join(dir, name);
    await mkdir(join(trialDir, 'agent'), { recursive: true });
    await mkdir(join(trialDir, 'verifier'), { recursive: true });
    await writeFile(join(trialDir, 'result.json'), JSON.stringify(result, null, 2));
    await writeFile(
      join(trialDir, 'config.json'),
      JSON.stringify({ task_name: task, trial_name: name, attempt }),
    );
    await writeFile(join(trialDir, 'instruction.md'), `Fix issue ${taskIndex} in ${repo}.\n`.repeat(20));
    await writeFile(join(trialDir, 'agent', 'patch.diff'), patchText(i));
    await writeFile(join(trialDir, 'verifier', 'test-output.txt'), logText(i));
    await writeFile(join(trialDir, 'verifier', 'reward.txt'), status === 'resolved' ? '1\n' : '0\n');
    if (withTokens)
      await writeFile(join(trialDir, 'agent', 'trajectory.json'), JSON.stringify(trajectory(i)));
  }
  await writeFile(
    join(dir, 'config.json'),
    JSON.stringify({
      job_name: 'bench',
      source: 'bench',
      agent: { name: 'bench-agent', version: '1', model_name: 'bench/model' },
      berth_trials: names,
    }),
  );
  await writeFile(
    join(dir, 'result.json'),
    JSON.stringify({
      id: 'bench',
      job_name: 'bench',
      berth_version: 'bench',
      started_at: '2026-12-01T10:00:00Z',
      finished_at: '2026-12-01T14:00:00Z',
      n_total_trials: trialCount,
      stats: {},
    }),
  );
}

/** The I/O floor of writing the report: read every file the report reads and write their bytes as one file. */
async function baselineWrite(dir: string): Promise<void> {
  const parts: Buffer[] = [];
  for (const name of await readdir(dir)) {
    if (!name.includes('__')) continue;
    for (const file of [
      'result.json',
      'config.json',
      'instruction.md',
      'agent/patch.diff',
      'verifier/test-output.txt',
      'verifier/reward.txt',
      'agent/trajectory.json',
    ])
      parts.push(await readFile(join(dir, name, file)).catch(() => Buffer.alloc(0)));
  }
  await writeFile(join(dir, 'baseline.bin'), Buffer.concat(parts));
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

const scratch = await mkdtemp(join(tmpdir(), 'berth-bench-report-'));
const job = join(scratch, 'bench');
try {
  const made = performance.now();
  await makeJob(job);
  console.log(
    `synthetic job: ${trialCount} trials in ${((performance.now() - made) / 1000).toFixed(1)} s (${job})`,
  );
  const emptyPage = join(scratch, 'empty.html');
  await writeFile(
    emptyPage,
    renderPage({
      title: 'baseline',
      kind: 'leaderboard',
      source: 'inline',
      data: { jobs_dir: '', datasets: [], skipped: [] },
    }),
  );

  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
  const open = async (file: string, charts: boolean) => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const started = performance.now();
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('body[data-ready]');
    if (charts)
      await page.waitForFunction(() =>
        [...document.querySelectorAll('[data-chart] .plot')].every((plot) => plot.closest('[data-rendered]')),
      );
    const seconds = (performance.now() - started) / 1000;
    await page.close();
    return seconds;
  };

  const times = {
    write: [] as number[],
    baseWrite: [] as number[],
    open: [] as number[],
    baseOpen: [] as number[],
  };
  let size = 0;
  for (let round = 0; round < rounds; round++) {
    let t = performance.now();
    await baselineWrite(job);
    times.baseWrite.push((performance.now() - t) / 1000);
    t = performance.now();
    const path = await writeJobReport(job);
    times.write.push((performance.now() - t) / 1000);
    size = (await readFile(path)).length;
    times.baseOpen.push(await open(emptyPage, false));
    times.open.push(await open(path, true));
  }
  await browser.close();
  const w = median(times.write);
  const bw = median(times.baseWrite);
  const o = median(times.open);
  const bo = median(times.baseOpen);
  console.log(`report.html: ${(size / 1048576).toFixed(1)} MiB`);
  console.log(
    `write: ${w.toFixed(2)} s (goal < 3 s); I/O floor ${bw.toFixed(2)} s; ratio ${(w / bw).toFixed(1)}`,
  );
  console.log(
    `open in Chromium: ${o.toFixed(2)} s (goal < 2 s); page without data ${bo.toFixed(2)} s; ratio ${(o / bo).toFixed(1)}`,
  );
  console.log(
    `medians of ${rounds} round(s): write ${times.write.map((x) => x.toFixed(2)).join(', ')}; open ${times.open.map((x) => x.toFixed(2)).join(', ')}`,
  );
  if (w >= 3 || o >= 2) process.exitCode = 1;
} finally {
  if (!args.includes('--keep')) await rm(scratch, { recursive: true, force: true });
}
