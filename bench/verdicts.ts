/**
 * Proof of no change: every verdict berth gives on the bundled sample, the multilingual
 * examples, HumanEval and the MBXP samples (and, with --docker, the Harbor fixtures), compared
 * with a recorded file. The verdicts of a berth checkout are taken through its command line
 * (`bin/berth.js` of that checkout), so the same script records the starting commit and checks
 * the current one:
 *
 *   # once, from a checkout of the starting commit (4826c82):
 *   npx tsx bench/verdicts.ts --berth /tmp/base/bin/berth.js --record bench/data/verdicts-4826c82.json
 *   # then, any time:
 *   npx tsx bench/verdicts.ts --compare bench/data/verdicts-4826c82.json
 *
 * A verdict is what a user reads: a trial's status, reward and FAIL_TO_PASS / PASS_TO_PASS
 * counts; a function-level sample's passed flag. Exit 1 when any differs (each is listed).
 * Data from BERTH_DATA (default ../shared/data beside the repository); a suite whose data is
 * absent is skipped with a message. Not a timed benchmark: it runs the suites one after another.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const berthBin = resolve(option('--berth') ?? join(root, 'bin', 'berth.js'));
const berthRoot = resolve(dirname(berthBin), '..');
const record = option('--record');
const compare = option('--compare');
const only = option('--only')?.split(',');
const docker = args.includes('--docker');
const data = resolve(process.env.BERTH_DATA ?? join(root, '..', 'shared', 'data'));

type Verdicts = Record<string, string>;
const verdicts: Verdicts = {};
const scratch = await mkdtemp(join(tmpdir(), 'berth-engine-verdicts-'));

function berth(argv: string[]): { code: number | null; stdout: string; stderr: string } {
  const started = performance.now();
  const run = spawnSync('node', [berthBin, ...argv], {
    cwd: berthRoot,
    encoding: 'utf8',
    env: { ...process.env, CI: '1' },
    maxBuffer: 256 * 1024 * 1024,
  });
  process.stderr.write(
    `  berth ${argv.join(' ').slice(0, 140)}: exit ${run.status} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
  if (run.status !== 0) process.stderr.write(run.stderr.split('\n').slice(-5).join('\n'));
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The verdict of every trial of a job folder: `status reward=R F2P=a/b P2P=c/d`. */
async function jobVerdicts(suite: string, jobDir: string): Promise<void> {
  let names: string[];
  try {
    names = (await readdir(jobDir, { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch {
    verdicts[`${suite}/(job)`] = 'no job folder';
    return;
  }
  for (const name of names.sort()) {
    const file = join(jobDir, name, 'result.json');
    if (!existsSync(file)) continue;
    const r = JSON.parse(await readFile(file, 'utf8')) as {
      verifier_result: { rewards: Record<string, number> | null } | null;
      exception_info: { exception_type: string } | null;
      berth: {
        status: string;
        FAIL_TO_PASS: { passed: number; total: number } | null;
        PASS_TO_PASS: { passed: number; total: number } | null;
      };
      step_results?: { verifier_result: { rewards: Record<string, number> } | null }[];
    };
    if (!r.berth) continue; // `berth multilingual run` of old: read from the job's rows below
    const counts = (c: { passed: number; total: number } | null) => (c ? `${c.passed}/${c.total}` : '-');
    const rewards = r.verifier_result?.rewards;
    const reward = rewards
      ? Object.entries(rewards)
          .sort()
          .map(([k, v]) => `${k}=${v}`)
          .join(',')
      : 'null';
    const steps = r.step_results
      ? ` steps=${r.step_results.map((s) => s.verifier_result?.rewards.reward ?? 'null').join(',')}`
      : '';
    verdicts[`${suite}/${name}`] =
      `${r.berth.status} ${reward} F2P=${counts(r.berth.FAIL_TO_PASS)} P2P=${counts(r.berth.PASS_TO_PASS)} exception=${r.exception_info?.exception_type ?? '-'}${steps}`;
  }
}

/** `berth multilingual run` (before it ran through the job): its job result.json lists rows. */
async function multilingualRows(suite: string, jobDir: string): Promise<void> {
  const file = join(jobDir, 'result.json');
  if (!existsSync(file)) return;
  const job = JSON.parse(await readFile(file, 'utf8')) as {
    by_task_type?: unknown;
    trials?: {
      instance_id: string;
      reward: number;
      resolved: boolean;
      counts?: Record<string, { passed: number; total: number }>;
      exception?: { type: string };
    }[];
  };
  let rows = job.trials;
  if (!job.by_task_type || !Array.isArray(rows)) {
    // Since `berth multilingual run` runs through the job: the rows are the trials' results.
    rows = [];
    for (const entry of await readdir(jobDir, { withFileTypes: true })) {
      const trial = join(jobDir, entry.name, 'result.json');
      if (!entry.isDirectory() || !existsSync(trial)) continue;
      const r = JSON.parse(await readFile(trial, 'utf8')) as {
        task_name: string;
        verifier_result: { rewards: Record<string, number> | null } | null;
        exception_info: { exception_type: string } | null;
        berth: {
          resolved: boolean;
          verifier_details: { counts?: Record<string, { passed: number; total: number }> } | null;
        };
      };
      rows.push({
        instance_id: r.task_name,
        reward: r.verifier_result?.rewards?.reward ?? 0,
        resolved: r.berth.resolved,
        ...(r.berth.verifier_details?.counts ? { counts: r.berth.verifier_details.counts } : {}),
        ...(r.exception_info ? { exception: { type: r.exception_info.exception_type } } : {}),
      });
    }
  }
  for (const row of rows) {
    const c = row.counts ?? {};
    const counts = (k: string) => (c[k] ? `${c[k].passed}/${c[k].total}` : '-');
    verdicts[`${suite}/${row.instance_id}`] =
      `${row.resolved ? 'resolved' : 'not-resolved'} reward=${row.reward} F2P=${counts('FAIL_TO_PASS')} P2P=${counts('PASS_TO_PASS')} exception=${row.exception?.type ?? '-'}`;
  }
}

async function runSuite(suite: string, argv: string[]): Promise<void> {
  if (only && !only.some((o) => suite.startsWith(o))) return;
  const jobs = join(scratch, 'jobs');
  const run = berth([...argv, '--jobs-dir', jobs, '--job-name', suite.replace(/[^A-Za-z0-9._-]/g, '_')]);
  if (run.code !== 0) verdicts[`${suite}/(exit)`] = String(run.code);
  const jobDir = join(jobs, suite.replace(/[^A-Za-z0-9._-]/g, '_'));
  if (argv[0] === 'multilingual') await multilingualRows(suite, jobDir);
  else await jobVerdicts(suite, jobDir);
}

/** Function-level: `passed` of every sample in the `_results.jsonl` berth eval writes. */
async function evalSuite(suite: string, argv: string[], resultsFile: string): Promise<void> {
  if (only && !only.some((o) => suite.startsWith(o))) return;
  const run = berth(['eval', ...argv]);
  if (run.code !== 0) verdicts[`${suite}/(exit)`] = String(run.code);
  if (!existsSync(resultsFile)) {
    verdicts[`${suite}/(results)`] = 'missing';
    return;
  }
  const lines = (await readFile(resultsFile, 'utf8')).split('\n').filter((l) => l.trim() !== '');
  const seen = new Map<string, number>();
  for (const line of lines) {
    const row = JSON.parse(line) as { task_id: string; passed: boolean };
    const n = (seen.get(row.task_id) ?? 0) + 1;
    seen.set(row.task_id, n);
    verdicts[`${suite}/${row.task_id}#${n}`] = row.passed ? 'passed' : 'failed';
  }
}

const sample = join(root, 'examples', 'swe-dockerless.jsonl');
process.stderr.write(`berth: ${berthBin}\n`);
for (const agent of ['oracle', 'nop'])
  await runSuite(`sample/${agent}`, ['run', '-p', sample, '-a', agent, '-n', '2']);
for (const p of ['cross', 'empty', 'partial'])
  await runSuite(`sample/predictions-${p}`, [
    'run',
    '-p',
    sample,
    '-a',
    'predictions',
    '--predictions',
    join(root, 'examples', 'predictions', `${p}.jsonl`),
  ]);
const multilingual = join(root, 'examples', 'multilingual');
const controls = ['-a', 'predictions', '--predictions', join(multilingual, 'predictions', 'controls.jsonl')];
for (const agent of ['oracle', 'nop'])
  await runSuite(`multilingual/run-${agent}`, ['run', '-p', multilingual, '-a', agent, '-n', '2']);
await runSuite('multilingual/run-controls', ['run', '-p', multilingual, ...controls]);
for (const agent of ['oracle', 'nop'])
  await runSuite(`multilingual/ml-${agent}`, ['multilingual', 'run', '-p', multilingual, '-a', agent]);
await runSuite('multilingual/ml-controls', ['multilingual', 'run', '-p', multilingual, ...controls]);

const humaneval = join(data, 'functional', 'humaneval', 'HumanEval.jsonl.gz');
if (existsSync(humaneval)) {
  for (const agent of ['oracle', 'nop']) {
    const out = join(scratch, `humaneval-${agent}.jsonl`);
    await evalSuite(
      `humaneval/${agent}`,
      ['--problems', humaneval, '-a', agent, '--out', out],
      out.replace(/\.jsonl$/, '.jsonl_results.jsonl'),
    );
  }
} else process.stderr.write(`skipped HumanEval: ${humaneval} is absent (set BERTH_DATA)\n`);

const mbxp = join(data, 'functional', 'mbxp');
for (const [name, problems, samples] of [
  ['mbpp', 'mbpp_release_v1.jsonl', 'mbpp_samples.jsonl'],
  ['mbjsp', 'mbjsp_release_v1.2.jsonl', 'mbjsp_samples.jsonl'],
  ['mbkp', 'mbkp_release_v1.2.jsonl', 'mbkp_samples.jsonl'],
] as const) {
  const p = join(mbxp, problems);
  const s = join(mbxp, samples);
  if (!existsSync(p) || !existsSync(s)) {
    process.stderr.write(`skipped ${name}: ${p} or ${s} is absent\n`);
    continue;
  }
  // berth eval writes <samples>_results.jsonl beside the samples: work on a copy.
  const copy = join(scratch, samples);
  await writeFile(copy, await readFile(s));
  await evalSuite(`mbxp/${name}`, ['--problems', p, '--samples', copy], `${copy}_results.jsonl`);
}

if (docker) {
  const fixtures = join(root, 'test', 'fixtures');
  for (const agent of ['oracle', 'nop']) {
    await runSuite(`harbor/${agent}`, ['run', '-p', join(fixtures, 'harbor', 'tasks'), '-a', agent]);
    for (const f of ['steps-gate', 'separate-artifacts', 'kotlin-junit'])
      await runSuite(`harbor-features/${f}-${agent}`, [
        'run',
        '-p',
        join(fixtures, 'harbor-features', f),
        '-a',
        agent,
        '--allow-env-secrets',
      ]);
  }
}
await rm(scratch, { recursive: true, force: true });

const keys = Object.keys(verdicts).sort();
const sorted: Verdicts = Object.fromEntries(keys.map((k) => [k, verdicts[k] as string]));
if (record) {
  await writeFile(record, `${JSON.stringify(sorted, null, 2)}\n`);
  process.stderr.write(`recorded ${keys.length} verdicts in ${record}\n`);
}
if (compare) {
  const before = JSON.parse(await readFile(compare, 'utf8')) as Verdicts;
  const suites = new Set(keys.map((k) => k.split('/').slice(0, 2).join('/')));
  const differences: string[] = [];
  for (const key of new Set([...Object.keys(before), ...keys])) {
    if (!suites.has(key.split('/').slice(0, 2).join('/'))) continue; // suite not run this time
    if (before[key] !== verdicts[key])
      differences.push(`${key}: ${before[key] ?? '(absent)'} -> ${verdicts[key] ?? '(absent)'}`);
  }
  const count = keys.filter((k) => !k.endsWith(')')).length;
  if (differences.length > 0) {
    process.stdout.write(
      `${differences.length} verdict(s) differ from ${compare}:\n  ${differences.sort().join('\n  ')}\n`,
    );
    process.exitCode = 1;
  } else
    process.stdout.write(`all ${count} verdicts (${suites.size} suites) are the same as in ${compare}\n`);
}
if (!record && !compare) process.stdout.write(`${JSON.stringify(sorted, null, 2)}\n`);
