/**
 * Runs the tamper corpus: turns every case into a trial of a few shared `berth run` jobs (one
 * per target and agent kind, so the whole corpus costs a handful of processes), then reads each
 * trial's result.json back. See test/tamper/README.md.
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execa } from 'execa';
import {
  type ReceivedRequest,
  type ScriptStep,
  startScriptedModelServer,
} from '../helpers/scripted-model-server.ts';
import type { FileChange, Outcome, SampleRow, SwebenchInput, TamperCase, Target } from './case.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin', 'berth.js');
const SAMPLE = join(ROOT, 'examples', 'swe-dockerless.jsonl');
const CASES = join(ROOT, 'test', 'tamper', 'cases');
const TASKS = join(ROOT, 'test', 'tamper', 'tasks');
const MULTILINGUAL = join(ROOT, 'examples', 'multilingual');

export interface LoadedCase {
  /** File name without `.ts`: the case's id. */
  id: string;
  case: TamperCase;
}

/** Every case under test/tamper/cases/, sorted by id; a malformed case is an error naming its file. */
export async function loadCases(): Promise<LoadedCase[]> {
  const files = readdirSync(CASES)
    .filter((f) => f.endsWith('.ts'))
    .sort();
  const loaded: LoadedCase[] = [];
  for (const file of files) {
    const id = file.slice(0, -3);
    const module = (await import(pathToFileURL(join(CASES, file)).href)) as { default?: TamperCase };
    const c = module.default;
    const problem = c ? checkCase(c) : 'no default export (export default defineCase({...}))';
    if (problem) throw new Error(`test/tamper/cases/${file}: ${problem}`);
    if (!/^[a-z0-9][a-z0-9-]*$/.test(id))
      throw new Error(`test/tamper/cases/${file}: name the file in lower-case words joined by -`);
    loaded.push({ id, case: c as TamperCase });
  }
  return loaded;
}

function checkCase(c: TamperCase): string | undefined {
  if (!c.title) return 'a case needs a title';
  if (c.targets.length === 0) return 'a case needs at least one target';
  const input = c.input;
  if (input.kind === 'swebench') {
    const given = [input.files, input.patch, input.command, input.deckhand].filter(
      (v) => v !== undefined,
    ).length;
    if (given !== 1) return 'a SWE-bench case gives exactly one of files, patch, command, deckhand';
    if (input.setup !== undefined && input.command === undefined) return 'setup goes with command';
    const outcomes = [c.expect.outcome].flat();
    if (outcomes.includes('tampering') && !c.swebench)
      return 'a case expecting tampering says what the SWE-bench rules give (swebench: {...})';
  } else if (input.kind === 'multilingual') {
    if ((input.command === undefined) === (input.patch === undefined))
      return 'a multilingual case gives exactly one of command, patch';
    if (c.swebench) return 'swebench expectations apply to SWE-bench rows only';
  } else {
    if ((input.solve === undefined) === (input.command === undefined))
      return 'a Harbor case gives exactly one of solve, command';
    if (input.setup !== undefined && input.command === undefined) return 'setup goes with command';
    if (c.targets.includes('local')) return 'Harbor tasks run in Docker only';
    if (c.swebench) return 'swebench expectations apply to SWE-bench rows only';
  }
  return undefined;
}

// ---------------------------------------------------------------- the sample's rows

interface SampleRowData {
  instance_id: string;
  patch: string;
  test_patch: string;
  problem_statement: string;
  FAIL_TO_PASS: string;
  PASS_TO_PASS: string;
  dockerless: { files: Record<string, string>; test_cmd: string; test_files: string[]; install?: string };
  [key: string]: unknown;
}

let sampleRows: Map<string, SampleRowData> | undefined;

/** The sample's rows by instance id. */
export function sample(): Map<string, SampleRowData> {
  sampleRows ??= new Map(
    readFileSync(SAMPLE, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => {
        const row = JSON.parse(l) as SampleRowData;
        return [row.instance_id, row];
      }),
  );
  return sampleRows;
}

function rowOf(id: SampleRow): SampleRowData {
  const row = sample().get(id);
  if (!row) throw new Error(`no row ${id} in examples/swe-dockerless.jsonl`);
  return row;
}

async function git(cwd: string, ...args: string[]) {
  return execa(
    'git',
    ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'core.hooksPath=/dev/null', ...args],
    {
      cwd,
    },
  );
}

/** Writes a row's snapshot into `dir` and commits it (the base). */
async function checkout(row: SampleRowData, dir: string): Promise<void> {
  for (const [path, content] of Object.entries(row.dockerless.files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  await git(dir, 'init', '-q');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-qm', 'base');
}

/**
 * The prediction of a SWE-bench case: a real `git diff` of its files against the row's base,
 * made in `work/diff-<name>` (a name of its own: predictions are made several at once).
 */
export async function predictionOf(input: SwebenchInput, work: string, name: string): Promise<string> {
  if (input.patch !== undefined) return input.patch;
  const row = rowOf(input.row);
  const dir = join(work, `diff-${name}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await checkout(row, dir);
  if (input.withGold) await execa('git', ['apply', '-'], { cwd: dir, input: row.patch });
  writeChanges(dir, input.files ?? {});
  await git(dir, 'add', '-A');
  const diff = (await git(dir, 'diff', '--cached', '--binary', 'HEAD')).stdout;
  rmSync(dir, { recursive: true, force: true });
  return `${diff}\n`;
}

/** Writes a case's file changes into the checkout `dir`. */
function writeChanges(dir: string, changes: Record<string, FileChange>): void {
  for (const [path, change] of Object.entries(changes)) {
    const file = join(dir, path);
    let old = '';
    try {
      old = readFileSync(file, 'utf8');
    } catch {}
    const next = typeof change === 'function' ? change(old) : change;
    if (next === null) rmSync(file, { force: true });
    else {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, next);
    }
  }
}

/**
 * A case's row with its `rowChanges`: its test command, and its test patch made again (a real
 * `git diff` against the base) with the case's test file changes on top of the row's.
 */
async function withRowChanges(
  input: SwebenchInput,
  row: SampleRowData,
  work: string,
  name: string,
): Promise<SampleRowData> {
  const changes = input.rowChanges;
  if (!changes) return row;
  const dockerless = { ...row.dockerless };
  if (changes.testCmd !== undefined) dockerless.test_cmd = changes.testCmd;
  let testPatch = row.test_patch;
  if (changes.testFiles) {
    const dir = join(work, `tests-${name}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    await checkout(rowOf(input.row), dir);
    await execa('git', ['apply', '-'], { cwd: dir, input: row.test_patch });
    writeChanges(dir, changes.testFiles);
    await git(dir, 'add', '-A');
    testPatch = `${(await git(dir, 'diff', '--cached', '--binary', 'HEAD')).stdout}\n`;
    rmSync(dir, { recursive: true, force: true });
    dockerless.test_files = [...new Set([...dockerless.test_files, ...Object.keys(changes.testFiles)])];
  }
  return { ...row, test_patch: testPatch, dockerless };
}

// ---------------------------------------------------------------- Docker images of the sample

/** Host Python modules pytest needs in a container (pure Python, copied from this machine). */
async function pytestModules(): Promise<string[]> {
  const { stdout } = await execa('python3', [
    '-c',
    [
      'import sys, os, pytest, _pytest.config, _pytest.junitxml, _pytest.pytester',
      'seen = set()',
      'for name, mod in list(sys.modules.items()):',
      '    f = getattr(mod, "__file__", None)',
      '    if not f or ("site-packages" not in f and "dist-packages" not in f): continue',
      '    top = name.split(".")[0]',
      '    m = sys.modules.get(top)',
      '    p = getattr(m, "__file__", None)',
      '    if not p: continue',
      '    seen.add(os.path.dirname(p) if os.path.basename(p) == "__init__.py" else p)',
      'print("\\n".join(sorted(seen)))',
    ].join('\n'),
  ]);
  return stdout.split('\n').filter((l) => l.trim() !== '');
}

/**
 * The sample's rows as SWE-bench instance images: the snapshot committed at /testbed on the
 * local base image, with pytest (copied from this machine) and this machine's node. Tagged by
 * content, so a second run reuses them. Returns instance id -> image.
 */
export async function buildSampleImages(
  baseImage: string,
  rows: SampleRow[],
  work: string,
): Promise<Map<string, string>> {
  const images = new Map<string, string>();
  const runtimeDir = join(work, 'runtime-image');
  mkdirSync(join(runtimeDir, 'py'), { recursive: true });
  const modules = await pytestModules();
  for (const path of modules)
    cpSync(path, join(runtimeDir, 'py', path.split('/').pop() as string), {
      recursive: true,
      dereference: true,
    });
  cpSync(process.execPath, join(runtimeDir, 'node'));
  writeFileSync(
    join(runtimeDir, 'Dockerfile'),
    [
      `FROM ${baseImage}`,
      'COPY py/ /usr/local/lib/python3.11/dist-packages/',
      'COPY node /usr/local/bin/node',
      'RUN python3 -m pytest --version && node --version',
      '',
    ].join('\n'),
  );
  const runtimeHash = await treeHash(runtimeDir, baseImage);
  const runtime = `berth-tamper-runtime:${runtimeHash}`;
  await buildIfMissing(runtime, runtimeDir);
  for (const id of rows) {
    const row = rowOf(id);
    const dir = join(work, `image-${id}`);
    mkdirSync(join(dir, 'testbed'), { recursive: true });
    for (const [path, content] of Object.entries(row.dockerless.files)) {
      mkdirSync(dirname(join(dir, 'testbed', path)), { recursive: true });
      writeFileSync(join(dir, 'testbed', path), content);
    }
    writeFileSync(
      join(dir, 'Dockerfile'),
      [
        `FROM ${runtime}`,
        'COPY testbed/ /testbed/',
        'RUN cd /testbed && git init -q && git -c user.name=t -c user.email=t@t add -A && git -c user.name=t -c user.email=t@t commit -qm base',
        'WORKDIR /testbed',
        '',
      ].join('\n'),
    );
    const tag = `berth-tamper-${id.replaceAll('_', '-').toLowerCase()}:${await treeHash(dir, runtime)}`;
    await buildIfMissing(tag, dir);
    images.set(id, tag);
  }
  return images;
}

async function treeHash(dir: string, salt: string): Promise<string> {
  const hash = createHash('sha256').update(salt);
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const p = join(d, entry.name);
      hash.update(p.slice(dir.length));
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile()) hash.update(readFileSync(p));
    }
  };
  walk(dir);
  return hash.digest('hex').slice(0, 16);
}

async function buildIfMissing(tag: string, dir: string): Promise<void> {
  const exists = await execa('docker', ['image', 'inspect', tag], { reject: false });
  if (exists.exitCode === 0) return;
  await execa('docker', ['build', '-q', '--network', 'none', '--label', 'berth.tamper=1', '-t', tag, dir]);
}

// ---------------------------------------------------------------- jobs

/** What one trial of the corpus came to. */
export interface TrialOutcome {
  /** The trial's result.json. */
  result: {
    berth: {
      status: string;
      resolved: boolean;
      note: string;
      tampering?: { vetoed: boolean; findings: { kind: string; message: string }[] } | null;
      verdict_by_rules?: Record<string, { status: string; resolved: boolean }>;
      [key: string]: unknown;
    };
    verifier_result: { rewards: Record<string, number> | null } | null;
    exception_info?: { exception_type: string; exception_message: string } | null;
    [key: string]: unknown;
  };
  /** The trial folder, for messages. */
  dir: string;
}

/** The case's outcome under the given rules, read from a result.json. */
export function outcomeOf(outcome: TrialOutcome, rules: 'default' | 'swebench'): Outcome | undefined {
  const b = outcome.result.berth;
  if (rules === 'swebench') {
    const v = b.verdict_by_rules?.swebench;
    // A trial that ended before any verdict (a phase's error, e.g. a resource limit) is an error
    // under every rules; one whose patch is empty or does not apply is unresolved under every rules.
    if (!v)
      return b.status === 'error'
        ? 'error'
        : b.status === 'patch_failed' || b.status === 'empty_patch'
          ? 'unresolved'
          : undefined;
    return v.resolved ? 'resolved' : v.status === 'error' ? 'error' : 'unresolved';
  }
  if (b.resolved) return 'resolved';
  if (b.tampering?.vetoed) return 'tampering';
  if (b.status === 'error') return 'error';
  return 'unresolved';
}

/** A trial of the corpus: a case (or a gold control) on one target. */
export interface Planned {
  /** The task name in the job (a derived instance id or a Harbor task folder). */
  name: string;
  caseId: string;
  target: Target;
}

export interface CorpusRun {
  trials: Map<string, TrialOutcome>;
  /** Process ids of the `berth run` processes (their cgroups, mounts and probe folders carry them). */
  berthPids: number[];
  /** Names of the jobs run (unique to this run; Docker containers carry them as a label). */
  jobNames: string[];
  /** Job folders read, and what each held (for the message when a trial's result is missing). */
  listings: string[];
  /** stdout/stderr of each berth run, for failure messages. */
  logs: string[];
}

/** Derived instance id of a case on a row. */
function derivedId(row: SampleRow, caseId: string): string {
  return `${row}__${caseId}`;
}

/**
 * Runs `work` over `items`, at most `limit` at once; the results in the order of `items`.
 */
async function inPool<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/**
 * The resource limits of every corpus job: small, so the bombs stay small on a shared machine
 * (docs/security.md) and reach their limit soon. On a loaded machine a fork bomb costs about one
 * scheduler round per fork (511 forks took 28 s at load 17) and a memory hog the pages it fills:
 * 128 processes and 512 MiB (were 512 and 1024; the calc task asks 512M itself) still leave room
 * for the Go toolchain's builds of the multilingual and Harbor Go tasks.
 */
export const CORPUS_LIMITS = { processes: 128, memoryMb: 512, storageMb: 128 } as const;

/**
 * Runs every case of one target (plus a gold control per row used) in a few berth jobs:
 * predictions, command agents, deckhand, Harbor tasks (one per agent), multilingual tasks
 * (command agents, predictions). Two lanes at once, each job with `-n 2`: the predictions job
 * in one, the others one after the other in the other (a trial waits on the scheduler, Docker
 * and the kernel more than it computes; jobs one after another left a slot idle at each job's
 * end). `images` maps the sample's rows to Docker images (docker target only).
 */
export async function runTarget(
  target: Target,
  cases: LoadedCase[],
  work: string,
  options: { images?: Map<string, string>; baseImage?: string; concurrency?: number } = {},
): Promise<CorpusRun> {
  const mine = cases.filter((c) => c.case.targets.includes(target));
  const trials = new Map<string, TrialOutcome>();
  const logs: string[] = [];
  const listings: string[] = [];
  const jobsDir = join(work, `jobs-${target}`);
  mkdirSync(jobsDir, { recursive: true });

  // SWE-bench rows: one derived row per case; gold controls on every row used.
  const rowsUsed = new Set<SampleRow>();
  const predictionRows: object[] = [];
  // Predictions to make (a real git diff each), made while the other lane runs.
  const toDiff: { instance_id: string; input: SwebenchInput }[] = [];
  const commandRows: object[] = [];
  const deckhandRows: object[] = [];
  const deckhandScripts = new Map<string, string[]>();
  const berthPids: number[] = [];
  const jobNames: string[] = [];
  // Agent set-up commands by task name: one `--agent-setup` per job dispatches on BERTH_TASK_NAME.
  const setups = new Map<string, string>();
  for (const { id, case: c } of mine) {
    if (c.input.kind !== 'swebench') continue;
    rowsUsed.add(c.input.row);
    const row = await withRowChanges(
      c.input,
      derivedRow(c.input.row, derivedId(c.input.row, id), target, options.images),
      work,
      `${target}-${id}`,
    );
    if (c.input.command !== undefined) {
      commandRows.push({ ...row, problem_statement: c.input.command });
      if (c.input.setup !== undefined) setups.set(row.instance_id, c.input.setup);
    } else if (c.input.deckhand !== undefined) {
      // The scripted model finds the case by this marker in the instruction.
      deckhandRows.push({ ...row, problem_statement: `Tamper case ${row.instance_id}.` });
      deckhandScripts.set(row.instance_id, c.input.deckhand);
    } else {
      predictionRows.push(row);
      toDiff.push({ instance_id: row.instance_id, input: c.input });
    }
  }
  const golds: object[] = [];
  for (const r of rowsUsed) {
    const row = derivedRow(r, derivedId(r, 'gold-control'), target, options.images);
    predictionRows.push(row);
    golds.push({
      instance_id: row.instance_id,
      model_name_or_path: 'gold',
      model_patch: rowOf(r).patch,
    });
  }
  const config = join(work, `${target}-limits.toml`);
  writeFileSync(config, `[docker]\npids_limit = ${CORPUS_LIMITS.processes}\n`);
  const common = [
    '--jobs-dir',
    jobsDir,
    '-n',
    String(options.concurrency ?? 2),
    '--override-memory-mb',
    String(CORPUS_LIMITS.memoryMb),
    '--override-storage-mb',
    String(CORPUS_LIMITS.storageMb),
    '--settings',
    config,
  ];
  const run = async (kind: string, args: string[], env: Record<string, string> = {}) => {
    // Named after this process too: another corpus run at the same time has its own jobs.
    const name = `${kind}-p${process.pid}`;
    jobNames.push(name);
    const child = execa('node', [BIN, 'run', ...args, ...common, '--job-name', name], {
      reject: false,
      env: { CI: '1', ...env },
      timeout: 1_200_000,
    });
    if (child.pid !== undefined) berthPids.push(child.pid);
    const r = await child;
    logs.push(`berth run ${name} (exit ${r.exitCode}):\n${r.stdout.slice(-4000)}\n${r.stderr.slice(-4000)}`);
    if (r.exitCode !== 0)
      throw new Error(`berth run ${name} exited ${r.exitCode}:\n${r.stderr.slice(-4000)}`);
    listings.push(`${join(jobsDir, name)}: ${collect(join(jobsDir, name), trials).join(', ')}`);
  };
  const predictionsLane = async () => {
    if (predictionRows.length === 0) return;
    const predictions = [
      ...(await inPool(toDiff, 2, async ({ instance_id, input }) => ({
        instance_id,
        model_name_or_path: 'tamper',
        model_patch: await predictionOf(input, work, instance_id),
      }))),
      ...golds,
    ];
    const data = join(work, `${target}-predictions.jsonl`);
    const preds = join(work, `${target}-predictions.preds.jsonl`);
    writeFileSync(data, predictionRows.map((r) => JSON.stringify(r)).join('\n'));
    writeFileSync(preds, predictions.map((r) => JSON.stringify(r)).join('\n'));
    await run('predictions', ['-p', data, '-a', 'predictions', '--predictions', preds]);
  };
  const otherLane = async () => {
    if (commandRows.length > 0) {
      const data = join(work, `${target}-commands.jsonl`);
      writeFileSync(data, commandRows.map((r) => JSON.stringify(r)).join('\n'));
      await run('commands', [
        '-p',
        data,
        '-a',
        'command',
        '--agent-command',
        'bash "$BERTH_INSTRUCTION_FILE"',
        ...setupFlag(setups, commandRows),
      ]);
    }
    if (deckhandRows.length > 0) {
      const data = join(work, `${target}-deckhand.jsonl`);
      writeFileSync(data, deckhandRows.map((r) => JSON.stringify(r)).join('\n'));
      const server = await startScriptedModelServer((request) => deckhandStep(request, deckhandScripts));
      try {
        await run(
          'deckhand',
          [
            '-p',
            data,
            '-a',
            'deckhand',
            '-m',
            'openrouter/scripted/model',
            '--model-base-url',
            `${server.url}/v1`,
          ],
          { OPENROUTER_API_KEY: 'sk-tamper-0000' },
        );
      } finally {
        await server.close();
      }
    }

    // Harbor tasks: one task folder per case, from test/tamper/tasks/<task>.
    const harborSolve = join(work, `${target}-harbor-oracle`);
    const harborCommand = join(work, `${target}-harbor-command`);
    for (const { id, case: c } of mine) {
      if (c.input.kind !== 'harbor') continue;
      if (c.input.setup !== undefined) setups.set(id, c.input.setup);
      const into = join(c.input.solve !== undefined ? harborSolve : harborCommand, id);
      cpSync(join(TASKS, c.input.task), into, { recursive: true });
      if (c.input.solve !== undefined) {
        mkdirSync(join(into, 'solution'), { recursive: true });
        writeFileSync(join(into, 'solution', 'solve.sh'), c.input.solve, { mode: 0o755 });
      } else writeFileSync(join(into, 'instruction.md'), c.input.command as string);
    }
    const imageMap = options.baseImage ? ['--image-map', `debian:bookworm-slim=${options.baseImage}`] : [];
    if (exists(harborSolve)) await run('harbor-oracle', ['-p', harborSolve, '-a', 'oracle', ...imageMap]);
    if (exists(harborCommand))
      await run('harbor-command', [
        '-p',
        harborCommand,
        '-a',
        'command',
        '--agent-command',
        'bash "$BERTH_INSTRUCTION_FILE"',
        ...setupFlag(
          setups,
          readdirSync(harborCommand).map((instance_id) => ({ instance_id })),
        ),
        ...imageMap,
      ]);
    // Multilingual tasks: one dataset whose tasks are copies of the demo's, named after the cases;
    // one for command cases, one for prediction (`patch`) cases.
    const demo = JSON.parse(readFileSync(join(MULTILINGUAL, 'sample_task.json'), 'utf8')) as {
      instance_id: string;
    }[];
    for (const mode of ['command', 'patch'] as const) {
      const root = join(work, `${target}-multilingual${mode === 'patch' ? '-predictions' : ''}`);
      const entries: object[] = [];
      const multilingualPredictions: object[] = [];
      for (const { id, case: c } of mine) {
        if (c.input.kind !== 'multilingual' || c.input[mode] === undefined) continue;
        const task = c.input.task;
        const entry = demo.find((e) => e.instance_id === task);
        if (!entry) throw new Error(`no task ${task} in examples/multilingual/sample_task.json`);
        entries.push({ ...entry, instance_id: id });
        const into = join(root, 'sample_tasks', id);
        cpSync(join(MULTILINGUAL, 'sample_tasks', task), into, { recursive: true });
        const configFile = join(into, 'tests', 'config.json');
        const config = JSON.parse(readFileSync(configFile, 'utf8'));
        writeFileSync(configFile, JSON.stringify({ ...config, instance_id: id }, null, 2));
        if (c.input.command !== undefined) writeFileSync(join(into, 'instruction.md'), c.input.command);
        if (c.input.patch !== undefined)
          multilingualPredictions.push({
            instance_id: id,
            model_name_or_path: 'tamper',
            model_patch: c.input.patch,
          });
      }
      if (entries.length === 0) continue;
      writeFileSync(join(root, 'sample_task.json'), JSON.stringify(entries, null, 2));
      if (mode === 'command')
        await run('multilingual-command', [
          '-p',
          root,
          '-e',
          target,
          '-a',
          'command',
          '--agent-command',
          'bash "$BERTH_INSTRUCTION_FILE"',
        ]);
      else {
        const preds = join(work, `${target}-multilingual.preds.jsonl`);
        writeFileSync(preds, multilingualPredictions.map((r) => JSON.stringify(r)).join('\n'));
        await run('multilingual-predictions', [
          '-p',
          root,
          '-e',
          target,
          '-a',
          'predictions',
          '--predictions',
          preds,
        ]);
      }
    }
  };
  // Both lanes to their end, then the first failure (a berth run that did not exit 0).
  const ended = await Promise.allSettled([predictionsLane(), otherLane()]);
  for (const e of ended) if (e.status === 'rejected') throw e.reason;
  return { trials, logs, listings, berthPids, jobNames };
}

/** The scripted model's next step for deckhand: the case's next command, then `finish`. */
function deckhandStep(request: ReceivedRequest, scripts: Map<string, string[]>): ScriptStep {
  const text = JSON.stringify(request.body);
  const name = /Tamper case ([A-Za-z0-9_.-]+?)\./.exec(text)?.[1];
  const commands = name ? scripts.get(name) : undefined;
  if (!commands) return { reply: { text: 'no tamper case named in the request' } };
  const turn = ((request.body.messages ?? []) as { role: string }[]).filter((m) => m.role === 'tool').length;
  const command = commands[turn];
  if (command === undefined)
    return { reply: { toolCalls: [{ name: 'finish', input: { summary: 'done' } }] } };
  return { reply: { toolCalls: [{ name: 'bash', input: { command } }] } };
}

/**
 * `--agent-setup` for a job whose tasks include some with a set-up command: one script that
 * runs the task's own (by `BERTH_TASK_NAME`; base64, so no quoting reaches it), else nothing.
 */
function setupFlag(setups: Map<string, string>, rows: object[]): string[] {
  const arms = rows.flatMap((row) => {
    const name = (row as { instance_id: string }).instance_id;
    const script = setups.get(name);
    if (script === undefined) return [];
    return [`  '${name}') printf %s '${Buffer.from(script).toString('base64')}' | base64 -d | bash ;;`];
  });
  if (arms.length === 0) return [];
  return ['--agent-setup', ['case "$BERTH_TASK_NAME" in', ...arms, '  *) true ;;', 'esac'].join('\n')];
}

function exists(path: string): boolean {
  try {
    readdirSync(path);
    return true;
  } catch {
    return false;
  }
}

/** A copy of a sample row under a new id, for the local environment (snapshot) or Docker (image). */
function derivedRow(
  id: SampleRow,
  name: string,
  target: Target,
  images: Map<string, string> | undefined,
): SampleRowData {
  const row = rowOf(id);
  if (target === 'local') return { ...row, instance_id: name };
  const image = images?.get(id);
  if (!image) throw new Error(`no Docker image built for ${id}`);
  const { files: _files, ...dockerless } = row.dockerless;
  return {
    ...row,
    instance_id: name,
    docker_image: image,
    dockerless: dockerless as SampleRowData['dockerless'],
  };
}

/**
 * Reads every trial's result.json of a job folder into `into`, keyed by task name; returns what
 * the folder holds (entries, with why a trial folder gave no result).
 */
function collect(jobDir: string, into: Map<string, TrialOutcome>): string[] {
  const seen: string[] = [];
  for (const entry of readdirSync(jobDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) {
      seen.push(entry.name);
      continue;
    }
    const dir = join(jobDir, entry.name);
    let result: TrialOutcome['result'];
    try {
      result = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8'));
    } catch (error) {
      seen.push(`${entry.name}/ (${(error as Error).message.split('\n')[0]})`);
      continue;
    }
    seen.push(`${entry.name}/`);
    into.set(String(result.task_name), { result, dir });
  }
  return seen;
}

/** The task name a case's trial has in its job. */
export function trialName(id: string, c: TamperCase): string {
  return c.input.kind === 'swebench' ? derivedId(c.input.row, id) : id;
}

/** The gold control's task name of a row. */
export function goldControlName(row: SampleRow): string {
  return derivedId(row, 'gold-control');
}

/** A work folder for one corpus run (removed by the caller). */
export function workDir(): string {
  const dir = join(tmpdir(), `berth-tamper-${process.pid}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}
