/**
 * `berth demo` (`npm run demo`): the bundled sample end to end, no Docker.
 * Checks its prerequisites first, then runs the gold patches and the seed's
 * three negative controls (empty, cross, partial; see controls.ts) on
 * `examples/swe-dockerless.jsonl` through the trial engine, and prints one
 * table per run. A sound dataset shows gold resolving every instance and every
 * control resolving none; the demo exits 1 when that is not what it saw.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Agent } from '../agents/agent.ts';
import { OracleAgent } from '../agents/oracle.ts';
import { loadPredictions, PredictionsAgent } from '../agents/predictions.ts';
import { createProviders } from '../environments/registry.ts';
import { PrerequisiteError } from '../errors.ts';
import { runJob } from '../jobs/job.ts';
import { planTrials } from '../jobs/plan.ts';
import { renderTable } from '../reporters/text.ts';
import { loadSwebench } from '../tasks/swebench/load.ts';
import type { Task } from '../tasks/task.ts';
import type { TrialResult } from '../trials/result.ts';
import { packagePath } from '../util/package-root.ts';
import { createVerifiers } from '../verifiers/registry.ts';
import { CONTROL_NAMES, makeControls, writeControls } from './controls.ts';
import { readRows } from './rows.ts';

const run = promisify(execFile);

/** The bundled sample, in berth's package folder. */
export const SAMPLE = packagePath('examples', 'swe-dockerless.jsonl');

/** One missing prerequisite and how to install it on Debian. */
export interface MissingPrerequisite {
  what: string;
  install: string;
}

/**
 * Checks what the sample needs: git, python3 with pytest, node >= 20.19.
 * Returns what is missing (empty when all is there).
 */
export async function checkPrerequisites(): Promise<MissingPrerequisite[]> {
  const missing: MissingPrerequisite[] = [];
  const works = async (file: string, args: string[]) => {
    try {
      await run(file, args, { timeout: 30_000 });
      return true;
    } catch {
      return false;
    }
  };
  if (!(await works('git', ['--version'])))
    missing.push({ what: 'git', install: 'sudo apt-get install -y git' });
  if (!(await works('python3', ['--version']))) {
    missing.push({ what: 'python3', install: 'sudo apt-get install -y python3 python3-pytest' });
  } else if (!(await works('python3', ['-m', 'pytest', '--version']))) {
    missing.push({
      what: 'pytest for python3',
      install: 'sudo apt-get install -y python3-pytest   (or: python3 -m pip install pytest)',
    });
  }
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  if (major < 20 || (major === 20 && minor < 19)) {
    missing.push({
      what: `node >= 20.19 (this is ${process.version})`,
      install: 'see https://nodejs.org or Debian trixie: sudo apt-get install -y nodejs',
    });
  }
  return missing;
}

export interface DemoRun {
  name: 'gold' | (typeof CONTROL_NAMES)[number];
  results: TrialResult[];
  resolved: number;
  total: number;
  seconds: number;
  /**
   * What a sound dataset must show: gold resolves all, a control resolves none;
   * `any` for the partial control of a dataset other than the sample.
   */
  expected: 'all' | 'none' | 'any';
}

export interface DemoOptions {
  dataset?: string;
  /** Trials run at the same time (default 2). */
  concurrency?: number;
  /** Keep the trial folders here instead of a temporary folder that is removed. */
  jobsDir?: string;
  /** Folder of git mirrors for rows without a snapshot (`--repos`). */
  reposDir?: string;
  write?: (text: string) => void;
}

/** Runs gold and the three controls; returns each run. Throws PrerequisiteError first if something is missing. */
export async function runDemo(options: DemoOptions = {}): Promise<DemoRun[]> {
  const write = options.write ?? ((text: string) => process.stdout.write(text));
  const missing = await checkPrerequisites();
  if (missing.length > 0) {
    throw new PrerequisiteError(
      `the demo needs what is missing below; on Debian or Ubuntu:\n${missing.map((m) => `  - ${m.what}: ${m.install}`).join('\n')}`,
    );
  }
  const dataset = resolve(options.dataset ?? SAMPLE);
  const tasks = await loadSwebench(dataset);
  const keep = options.jobsDir !== undefined;
  const root = keep ? resolve(options.jobsDir as string) : await mkdtemp(join(tmpdir(), 'berth-demo-'));
  try {
    const controls = makeControls(await readRows(dataset));
    const files = await writeControls(controls, join(root, 'predictions'));
    for (const skip of controls.skipped)
      write(`note: no ${skip.control} prediction for ${skip.instance_id}: ${skip.reason}\n`);
    const agents: [DemoRun['name'], Agent][] = [['gold', new OracleAgent()]];
    for (const name of CONTROL_NAMES)
      agents.push([name, new PredictionsAgent(await loadPredictions(files[name]))]);
    write(
      `berth demo: ${tasks.length} instances from ${dataset}, gold and ${CONTROL_NAMES.length} negative controls\n`,
    );
    const runs: DemoRun[] = [];
    for (const [name, agent] of agents) {
      const started = performance.now();
      const results = await runAll(tasks, agent, root, name, options.concurrency ?? 2, options.reposDir);
      const seconds = (performance.now() - started) / 1000;
      const resolved = results.filter((r) => r.berth.resolved).length;
      const demoRun: DemoRun = {
        name,
        results,
        resolved,
        total: results.length,
        seconds,
        expected: name === 'gold' ? 'all' : 'none',
      };
      runs.push(demoRun);
      write(
        `\n== ${name}${name === 'gold' ? ' (the oracle applies each gold patch)' : ` control (${describe(name)})`}\n`,
      );
      write(`${renderTable(results)}\n`);
      write(
        `resolved ${resolved}/${results.length} (${((100 * resolved) / Math.max(1, results.length)).toFixed(1)}%) in ${seconds.toFixed(1)}s\n`,
      );
    }
    const ok = demoPassed(runs);
    write(
      `\n${ok ? 'OK' : 'UNEXPECTED'}: gold resolves ${runs[0]?.resolved}/${runs[0]?.total}; ${runs
        .slice(1)
        .map((r) => `${r.name} ${r.resolved}/${r.total}`)
        .join(
          ', ',
        )}${ok && runs.every((r) => r.expected === 'all' || r.resolved === 0) ? ' (every control resolves none)' : ''}\n`,
    );
    const partial = runs.find((r) => r.name === 'partial');
    const partialResolved =
      partial?.results.filter((r) => r.berth.resolved).map((r) => r.berth.instance_id) ?? [];
    if (partialResolved.length > 0) {
      write(
        `note: the partial control resolves ${partialResolved.join(', ')}: the last hunk of ${partialResolved.length === 1 ? 'that gold patch' : 'those gold patches'} is not needed by ${partialResolved.length === 1 ? 'its' : 'their'} tests (a docstring, a refactor, an untested path)${partial?.expected === 'none' ? '' : '; informational for a dataset other than the sample'}\n`,
      );
    }
    if (keep) write(`trial folders: ${root}\n`);
    return runs;
  } finally {
    if (!keep) await rm(root, { recursive: true, force: true });
  }
}

/** True when every run shows what it must (see `DemoRun.expected`). */
export function demoPassed(runs: readonly DemoRun[]): boolean {
  return runs.every((r) =>
    r.expected === 'all' ? r.resolved === r.total : r.expected === 'none' ? r.resolved === 0 : true,
  );
}

function describe(name: string): string {
  if (name === 'empty') return 'every instance submits an empty patch';
  if (name === 'cross') return "every instance submits the next instance's gold patch";
  return 'every instance submits its gold patch without the last hunk';
}

/**
 * Runs one trial per task with `agent` as a berth job (`runJob`, the engine of
 * `berth run`), `concurrency` at a time, under `jobsDir/<jobName>`.
 */
export async function runAll(
  tasks: Task[],
  agent: Agent,
  jobsDir: string,
  jobName: string,
  concurrency: number,
  reposDir: string | undefined,
): Promise<TrialResult[]> {
  const summary = await runJob({
    jobsDir,
    jobName,
    source: 'demo',
    plan: planTrials(tasks, { attempts: 1 }),
    agent,
    providers: createProviders(reposDir ? { reposDir: resolve(reposDir) } : {}),
    verifiers: createVerifiers(),
    concurrency,
  });
  return summary.trials;
}
